import { ConditionalCheckFailedException, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, isThrottledCancellation } from '#lib/db/unavailable';

const networkError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:8000`), { code });

describe('isDatabaseUnavailable', () => {
  it('counts refused and lost connections, throttling and 5xx answers as the database being unavailable', () => {
    const throttled = new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} });
    const serverError = Object.assign(new Error('boom'), {
      name: 'Unknown',
      $metadata: { httpStatusCode: 503 },
    });

    expect(isDatabaseUnavailable(networkError('ECONNREFUSED'))).toBe(true);
    expect(isDatabaseUnavailable(networkError('ECONNRESET'))).toBe(true);
    expect(isDatabaseUnavailable(throttled)).toBe(true);
    expect(isDatabaseUnavailable(serverError)).toBe(true);
  });

  it('leaves failed conditions, bad requests and other errors alone', () => {
    const condition = new ConditionalCheckFailedException({
      message: 'no',
      $metadata: { httpStatusCode: 400 },
    });
    const validation = Object.assign(new Error('bad key'), {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    });

    expect(isDatabaseUnavailable(condition)).toBe(false);
    expect(isDatabaseUnavailable(validation)).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
  });
});

describe('isThrottledCancellation', () => {
  it('is true only when load, not a condition, cancelled the transaction', () => {
    expect(isThrottledCancellation([{ Code: 'None' }, { Code: 'ThrottlingError' }])).toBe(true);
    expect(isThrottledCancellation([{ Code: 'ConditionalCheckFailed' }, { Code: 'ThrottlingError' }])).toBe(false);
    expect(isThrottledCancellation([{ Code: 'TransactionConflict' }])).toBe(false);
    expect(isThrottledCancellation([{ Code: 'None' }])).toBe(false);
  });
});
