import { describe, expect, it } from 'vitest';
import { PAIR_FAILURES_BEFORE_WAIT, pairWaitSeconds } from '#lib/identity/login-throttle';

describe('the wait of one email from one address', () => {
  it('is none before the tenth failure, then a minute doubling to at most 15 minutes', () => {
    const waits = [1, 9, 10, 11, 12, 13, 14, 15, 30].map(pairWaitSeconds);
    expect(PAIR_FAILURES_BEFORE_WAIT).toBe(10);
    expect(waits).toEqual([0, 0, 60, 120, 240, 480, 900, 900, 900]);
  });
});
