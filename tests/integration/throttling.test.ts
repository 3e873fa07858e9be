import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GroupHandler } from '#lib/http/group-handler';
import type * as Identity from '#tests/support/identity';
import type * as Integrity from '#tests/support/integrity';
import { type Seen, startThrottlingProxy, type ThrottlingProxy } from '#tests/support/throttling-proxy';

/**
 * DynamoDB throttling, as the service's own client meets it: this file's handlers talk to DynamoDB Local
 * through a proxy (tests/support/throttling-proxy.ts) that answers chosen requests as a throttled table
 * does and passes the rest through. A throttled call must be retried with backoff by the client's retry
 * strategy (three attempts, jittered exponential delays) and succeed once the table lets it; throttling
 * that outlasts the attempts must end in 503 SERVICE_UNAVAILABLE with Retry-After, never a 500.
 */

/**
 * The SDK's standard strategy waits a random time below `1000 ms × 2^(n-1)` before the n-th retry of a
 * throttled call (full jitter); the margin is the proxy's and DynamoDB Local's own time.
 */
const THROTTLED_DELAY_CAP_MS = [1_000, 2_000];
const MARGIN_MS = 1_000;

let proxy: ThrottlingProxy;
let identity: typeof Identity;
let integrity: typeof Integrity;
let products: GroupHandler;
let owner: Identity.TestUser;
let requests = 0;

beforeAll(async () => {
  // Prepare: the proxy in front of the run's DynamoDB Local, and the configuration pointing at it before
  // anything loads it.
  proxy = await startThrottlingProxy(process.env.DYNAMODB_ENDPOINT as string);
  process.env.DYNAMODB_ENDPOINT = proxy.endpoint;
  identity = await import('#tests/support/identity');
  integrity = await import('#tests/support/integrity');
  ({ handler: products } = await import('#functions/http/products'));
  await identity.newUser('throttleadmin');
  owner = await identity.newUser('throttled');
  for (const slug of ['rocket', 'comet']) {
    const created = await send('POST', '/products', { name: slug, slug });
    if (created.status !== 201) throw new Error(`setup failed: ${JSON.stringify(created.body)}`);
  }
});

afterAll(async () => {
  const throttled = proxy.seen.filter((request) => request.throttled);
  const kinds = new Map<string, number>();
  for (const request of throttled) kinds.set(request.operation, (kinds.get(request.operation) ?? 0) + 1);
  const byKind = [...kinds].map(([operation, count]) => `${count} ${operation}`).join(', ');
  console.info(`throttling: ${throttled.length} throttled answers injected (${byKind}); ${requests} requests sent`);
  await proxy.close();
});

function send(method: string, path: string, body?: Record<string, unknown>) {
  requests += 1;
  return identity.call(products, method, path, { token: owner.token, ...(body ? { body } : {}) });
}

/** The requests of `operation` whose body contains `text`, as the proxy saw them. */
const seenFor = (operation: string, text: string): Seen[] =>
  proxy.seen.filter((request) => request.operation === operation && request.body.includes(text));

/** Milliseconds between consecutive requests. */
const gaps = (requests: Seen[]): number[] =>
  requests.slice(1).map((request, index) => request.at - (requests[index]?.at ?? 0));

/** A 503 as the service promises one: the envelope, Retry-After, a trace id. */
function expectUnavailable(answer: Identity.CallResult) {
  expect(answer.status).toBe(503);
  expect(answer.body).toEqual({
    error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), details: [] },
  });
  expect(Number(answer.headers['Retry-After'])).toBeGreaterThan(0);
  expect(answer.headers['X-Trace-Id']).toBeTruthy();
}

describe('a throttled table', () => {
  it('has a read throttled twice retried with backoff by the client, and answered 200', async () => {
    // Prepare
    for (const slug of ['rocket', 'comet']) {
      proxy.throttle({
        operation: 'GetItem',
        containing: `PRODUCT#${slug}`,
        times: 2,
        answer: 'ProvisionedThroughputExceededException',
      });
    }

    // Act
    const reads = [await send('GET', '/products/rocket'), await send('GET', '/products/comet')];

    // Assess
    proxy.clear();
    expect(reads.map((read) => [read.status, read.body.data.slug])).toEqual([
      [200, 'rocket'],
      [200, 'comet'],
    ]);
    const waits: number[] = [];
    for (const slug of ['rocket', 'comet']) {
      const attempts = seenFor('GetItem', `PRODUCT#${slug}`);
      expect(attempts.map((request) => [request.attempt, request.throttled])).toEqual([
        ['attempt=1; max=3', true],
        ['attempt=2; max=3', true],
        ['attempt=3; max=3', false],
      ]);
      const [first, second] = gaps(attempts) as [number, number];
      expect(first).toBeLessThan((THROTTLED_DELAY_CAP_MS[0] ?? 0) + MARGIN_MS);
      expect(second).toBeLessThan((THROTTLED_DELAY_CAP_MS[1] ?? 0) + MARGIN_MS);
      waits.push(first, second);
    }
    // Four waits drawn at random below 1 s, 2 s, 1 s and 2 s: together below 100 ms about once in a million.
    expect(waits.reduce((sum, wait) => sum + wait, 0)).toBeGreaterThan(100);
  });

  it('has a write throttled once (ThrottlingException) retried, and answered 201', async () => {
    // Prepare
    proxy.throttle({
      operation: 'TransactWriteItems',
      containing: 'PRODUCT#nova',
      times: 1,
      answer: 'ThrottlingException',
    });

    // Act
    const created = await send('POST', '/products', { name: 'Nova', slug: 'nova' });

    // Assess
    proxy.clear();
    expect(created.status).toBe(201);
    expect(seenFor('TransactWriteItems', 'PRODUCT#nova').map((request) => request.throttled)).toEqual([true, false]);
  });

  it('has a transaction cancelled for throttling retried with backoff, and answered 201', async () => {
    // Prepare: DynamoDB reports throttled items of a transaction as a cancellation, which the SDK does not retry.
    proxy.throttle({
      operation: 'TransactWriteItems',
      containing: 'PRODUCT#pulsar',
      times: 2,
      answer: 'TransactionThrottled',
    });

    // Act
    const created = await send('POST', '/products', { name: 'Pulsar', slug: 'pulsar' });

    // Assess
    proxy.clear();
    expect(created.status).toBe(201);
    const attempts = seenFor('TransactWriteItems', 'PRODUCT#pulsar');
    expect(attempts.map((request) => request.throttled)).toEqual([true, true, false]);
    // The service's own pauses: at least half of 200 ms, then of 400 ms.
    const [first, second] = gaps(attempts) as [number, number];
    expect(first).toBeGreaterThanOrEqual(99);
    expect(second).toBeGreaterThanOrEqual(199);
  });

  it.each([
    ['a read', 'GetItem', 'ProvisionedThroughputExceededException'],
    ['a write', 'TransactWriteItems', 'ThrottlingException'],
    ['a transaction', 'TransactWriteItems', 'TransactionThrottled'],
  ] as const)(
    'answers 503 with Retry-After after three attempts when the table throttles %s every time',
    async (_, operation, answer) => {
      // Prepare
      const slug = `quasar-${answer.toLowerCase()}`;
      const containing = `PRODUCT#${operation === 'GetItem' ? 'rocket' : slug}`;
      proxy.throttle({ operation, containing, answer });
      const before = proxy.seen.length;
      const request = () =>
        operation === 'GetItem' ? send('GET', '/products/rocket') : send('POST', '/products', { name: slug, slug });

      // Act
      const refused = await request();
      const attempts = proxy.seen.slice(before).filter((seen) => seen.body.includes(containing));
      proxy.clear();
      const after = await request();

      // Assess
      expectUnavailable(refused);
      expect(attempts.map((seen) => seen.throttled)).toEqual([true, true, true]);
      expect(after.status).toBe(operation === 'GetItem' ? 200 : 201);
      expect(integrity.integrityProblems(await integrity.scanTable())).toEqual([]);
    },
  );
});
