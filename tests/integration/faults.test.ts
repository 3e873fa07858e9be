import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '#infra/local/dynamodb-local';
import { memoryQueue } from '#lib/adapters/local/memory-queue';
import type { GroupHandler } from '#lib/http/group-handler';
import { fixedClock } from '#lib/kernel/clock';
import type { AgentRunner } from '#lib/kernel/ports';
import { MAX_RECEIVES } from '#lib/queue/partial-batch';
import { crash, createTable, freeze } from '#tests/support/dynamo-faults';
import type * as Identity from '#tests/support/identity';
import type * as Integrity from '#tests/support/integrity';
import { recordingScheduler } from '#tests/support/scheduler';

/**
 * The database failing under load. This file runs on a DynamoDB Local of its own, kept on disk so that
 * it can be killed and started again on the same port with its data; the handlers are loaded after the
 * configuration points at it, as a cold start would. While writes run, the Java process is killed
 * (SIGTERM, then SIGKILL): every answer during the outage must be 503 SERVICE_UNAVAILABLE in the error
 * envelope with Retry-After, soon, never a 500 or a hang. After the restart every record the API said 201
 * for is there, none it refused after the crash is there at all, and every guard and count agrees with
 * the records (tests/support/integrity.ts). Then the database is frozen (SIGSTOP) instead, as behind a
 * network partition: requests must still end in 503 within a bound rather than wait for the database.
 * Last, a discovery run's queue message meets the outage: the real worker fails it on every receive, the
 * local queue dead-letters it after MAX_RECEIVES, and once the database is back the reconciler ends the
 * run as failed (the other consumers' dead letters: queue-faults.test.ts).
 */

/** How long one DynamoDB call may wait for an answer here: short, so that a frozen database costs seconds. */
const DB_TIMEOUT_MS = 2_000;
/** No answer, 503 included, may take longer than this (the HTTP functions' timeout is 29 s). */
const ANSWER_BOUND_MS = 10_000;
const WORKERS = 4;
/** Writes acknowledged before the crash; requests answered after it. */
const WRITES_BEFORE_CRASH = 12;
const REQUESTS_DURING_OUTAGE = 16;

let dataDir: string;
let dynamo: DynamoLocal;
let identity: typeof Identity;
let integrity: typeof Integrity;
let products: GroupHandler;
let tasks: GroupHandler;
let owner: Identity.TestUser;

const faults = { crashes: 0, restarts: 0, freezes: 0, requestsDuringFaults: 0, receivesDuringFaults: 0 };
/** The writes of the crashes: acknowledged, refused while in flight at a crash, refused after it. */
const writes = { acknowledged: 0, inFlight: 0, afterCrash: 0, lostByEmulator: 0 };
let next = 0;
let requestsSent = 0;

beforeAll(async () => {
  // Prepare: a database of this file's own, and the configuration pointing at it before anything loads it.
  dataDir = mkdtempSync(join(tmpdir(), 'aos-faults-'));
  dynamo = await startDynamoLocal({ dataDir });
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.DYNAMODB_TIMEOUT_MS = String(DB_TIMEOUT_MS);
  await createTable(dynamo.endpoint, process.env.TABLE_NAME as string);
  identity = await import('#tests/support/identity');
  integrity = await import('#tests/support/integrity');
  ({ handler: products } = await import('#functions/http/products'));
  ({ handler: tasks } = await import('#functions/http/tasks'));
  await identity.newUser('faultadmin');
  owner = await identity.newUser('faulty');
  await ok(
    identity.call(products, 'POST', '/products', { token: owner.token, body: { name: 'Anchor', slug: 'anchor' } }),
  );
}, 60_000);

afterAll(async () => {
  console.info(
    `faults: ${faults.crashes} crash, ${faults.restarts} restart, ${faults.freezes} freeze of DynamoDB Local; ` +
      `${requestsSent} requests sent, ${faults.requestsDuringFaults} of them while the database was down or frozen; ` +
      `${faults.receivesDuringFaults} queue receives during the outage; writes around the crash: ` +
      `${writes.acknowledged} acknowledged (${writes.lostByEmulator} of them lost by DynamoDB Local at SIGKILL), ` +
      `${writes.inFlight} refused in flight, ${writes.afterCrash} refused after it`,
  );
  await dynamo?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function ok(answer: Promise<Identity.CallResult>): Promise<Identity.CallResult> {
  const result = await answer;
  if (result.status >= 300) throw new Error(`setup call failed: ${result.status} ${JSON.stringify(result.body)}`);
  return result;
}

interface Sent {
  kind: 'product' | 'task';
  name: string;
  status: number;
  body: Identity.CallResult['body'];
  headers: Record<string, string>;
  ms: number;
  /** Sent once the crash had been seen: the database was certainly down for the whole request. */
  afterCrash: boolean;
}

/** One timed request; everything a test asserts about an answer is kept. */
async function timed(
  handler: GroupHandler,
  method: string,
  path: string,
  body?: Record<string, unknown>,
): Promise<{ status: number; body: Identity.CallResult['body']; headers: Record<string, string>; ms: number }> {
  requestsSent += 1;
  const started = performance.now();
  const answer = await bounded(
    identity.call(handler, method, path, { token: owner.token, ...(body ? { body } : {}) }),
    `${method} ${path}`,
  );
  return { ...answer, ms: performance.now() - started };
}

/** The work's result, or a failure once ANSWER_BOUND_MS have passed without one: a hang fails the test. */
function bounded<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ANSWER_BOUND_MS} ms`)), ANSWER_BOUND_MS);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

/** A 503 as the service promises one: the envelope, Retry-After, a trace id. */
function expectUnavailable(answer: { status: number; body: unknown; headers: Record<string, string>; ms: number }) {
  expect(answer.status).toBe(503);
  expect(answer.body).toEqual({
    error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), details: [] },
  });
  expect(Number(answer.headers['Retry-After'])).toBeGreaterThan(0);
  expect(answer.headers['X-Trace-Id']).toBeTruthy();
  expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
}

/**
 * SIGTERM and SIGKILL both end the process mid-request; only after SIGTERM does DynamoDB Local keep every
 * write it acknowledged. After SIGKILL it may lose its last acknowledged transactions, whole (measured:
 * 3 of 1,000; DynamoDB in AWS never does), so that run holds acknowledged records to being whole or
 * absent, as every other record, and counts the ones the emulator lost.
 */
describe.each([
  ['SIGTERM', true],
  ['SIGKILL', false],
] as const)('DynamoDB Local killed (%s) while writes run', (signal, keepsAcknowledged) => {
  it('answers 503 with Retry-After throughout, and keeps every record whole or absent', async () => {
    // Act: writers create products and tasks (each one transaction of several items) until the crash has
    // been answered REQUESTS_DURING_OUTAGE times; the crash comes once WRITES_BEFORE_CRASH have landed.
    const sent: Sent[] = [];
    let crashed = false;
    let crashing: Promise<void> | undefined;
    let afterCrash = 0;
    const worker = async () => {
      while (afterCrash < REQUESTS_DURING_OUTAGE) {
        next += 1;
        const kind = next % 2 === 0 ? 'task' : 'product';
        const name = `${kind}-${next}`;
        const down = crashed;
        const answer =
          kind === 'product'
            ? await timed(products, 'POST', '/products', { name, slug: name })
            : await timed(tasks, 'POST', '/tasks', { title: name, product_slug: 'anchor' });
        sent.push({ kind, name, ...answer, afterCrash: down });
        if (down) {
          afterCrash += 1;
          faults.requestsDuringFaults += 1;
        }
        if (!crashing && sent.filter((one) => one.status === 201).length >= WRITES_BEFORE_CRASH) {
          faults.crashes += 1;
          crashing = crash(dynamo, signal).then(() => {
            crashed = true;
          });
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    const reads = [await timed(products, 'GET', '/products/anchor'), await timed(tasks, 'GET', '/tasks')];
    faults.requestsDuringFaults += reads.length;
    writes.acknowledged += sent.filter((one) => one.status === 201).length;
    writes.inFlight += sent.filter((one) => !one.afterCrash && one.status === 503).length;
    writes.afterCrash += sent.filter((one) => one.afterCrash).length;

    // Assess: during the outage, 503 as promised; before it, 201 or (in flight at the crash) 503.
    expect(sent.filter((one) => one.status !== 201 && one.status !== 503)).toEqual([]);
    for (const answer of [...sent.filter((one) => one.status === 503), ...reads]) expectUnavailable(answer);
    expect(sent.filter((one) => one.afterCrash && one.status !== 503)).toEqual([]);

    // Act: the database comes back on the same port with its data.
    dynamo = await startDynamoLocal({ dataDir, port: dynamo.port });
    faults.restarts += 1;

    // Assess: every write acknowledged is there (after SIGTERM), every one refused after the crash is
    // absent, and every record is whole: its guards, pointers and counts agree with it.
    const items = await integrity.scanTable();
    const stored = (one: Sent) =>
      items.some((item) =>
        one.kind === 'product'
          ? item.sk === `PRODUCT#${one.name}`
          : item.title === one.name && item.id === one.body.data.id,
      );
    const lost = sent.filter((one) => one.status === 201 && !stored(one)).map((one) => one.name);
    writes.lostByEmulator += lost.length;
    if (keepsAcknowledged) expect(lost).toEqual([]);
    expect(sent.filter((one) => one.afterCrash && stored(one)).map((one) => one.name)).toEqual([]);
    expect(integrity.integrityProblems(items)).toEqual([]);
    // …and the service writes again without a restart of its own.
    const after = await timed(products, 'POST', '/products', { name: `Back after ${signal}` });
    expect(after.status).toBe(201);
  }, 60_000);
});

describe('DynamoDB Local frozen (it accepts connections and never answers)', () => {
  it('answers 503 with Retry-After within a bound instead of waiting for it, and recovers once it thaws', async () => {
    // Prepare
    const thaw = freeze(dynamo);
    faults.freezes += 1;

    // Act
    let answers: Awaited<ReturnType<typeof timed>>[];
    try {
      answers = await Promise.all([
        timed(products, 'POST', '/products', { name: 'Frozen product', slug: 'frozen-product' }),
        timed(products, 'GET', '/products/anchor'),
        timed(tasks, 'POST', '/tasks', { title: 'Frozen task' }),
      ]);
    } finally {
      thaw();
    }
    faults.requestsDuringFaults += answers.length;

    // Assess
    for (const answer of answers) expectUnavailable(answer);
    const read = await timed(products, 'GET', '/products/anchor');
    expect(read.status).toBe(200);
    // A write the frozen database read before it stopped may land when it thaws: whole, or not at all.
    expect(integrity.integrityProblems(await integrity.scanTable())).toEqual([]);
  }, 60_000);
});

describe('the discovery run worker while DynamoDB Local is down', () => {
  it('fails the message on every receive, dead-letters it, and the reconciler ends the run failed', async () => {
    // Prepare: a run queued while the database is up; its message held until the database is down.
    const { discoveryEnginesHandler } = await import('#functions/http/discovery-engines');
    const { discoveryRunConsumer } = await import('#functions/queue/discovery-run');
    const { discoveryReconcilerHandler } = await import('#functions/schedule/discovery-reconciler');
    const scheduler = recordingScheduler();
    const held: unknown[] = [];
    const engines = discoveryEnginesHandler({
      ports: { scheduler, queue: { send: async (_, body) => void held.push(body) } },
    });
    const runs: unknown[] = [];
    const runner: AgentRunner = {
      kind: 'local',
      run: async (request) => {
        runs.push(request);
        return {
          output: { summary: 'nothing new', findings: [] },
          usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
          model: 'test',
        };
      },
    };
    await ok(
      identity.call(engines, 'POST', '/discovery-engines', {
        token: owner.token,
        body: { name: 'Radar', layer: 'market' },
      }),
    );
    const queued = await ok(identity.call(engines, 'POST', '/discovery-engines/radar/run', { token: owner.token }));
    const receives: number[] = [];
    const consumer = discoveryRunConsumer({ runner });
    const queue = memoryQueue({
      consumers: {
        'discovery-run': async (event) => {
          receives.push(...event.Records.map((record) => Number(record.attributes.ApproximateReceiveCount)));
          return consumer(event);
        },
      },
      visibilityTimeoutSeconds: 0.05,
      maxReceiveCount: MAX_RECEIVES,
    });
    // SIGTERM: after SIGKILL, DynamoDB Local may lose the run it acknowledged just before.
    await crash(dynamo, 'SIGTERM');
    faults.crashes += 1;

    // Act
    try {
      await queue.send('discovery-run', held[0]);
      await bounded(queue.drain(), 'the discovery run queue');
    } finally {
      queue.close();
    }
    faults.receivesDuringFaults += receives.length;
    dynamo = await startDynamoLocal({ dataDir, port: dynamo.port });
    faults.restarts += 1;
    const reconcile = discoveryReconcilerHandler({
      ports: { scheduler, clock: fixedClock(new Date(Date.now() + 16 * 60_000)) },
      orgId: owner.orgId,
    });
    const report = await reconcile();
    const engine = await ok(identity.call(engines, 'GET', '/discovery-engines/radar', { token: owner.token }));

    // Assess
    expect(receives).toEqual(Array.from({ length: MAX_RECEIVES }, (_, index) => index + 1));
    expect(queue.deadLetters).toEqual([
      expect.objectContaining({ queue: 'discovery-run', receiveCount: MAX_RECEIVES }),
    ]);
    expect(runs).toEqual([]);
    expect(report.runs_failed).toBe(1);
    expect(engine.body.data.recent_runs).toEqual([
      expect.objectContaining({ id: queued.body.data.id, status: 'failed', error: expect.any(String) }),
    ]);
    expect(integrity.integrityProblems(await integrity.scanTable())).toEqual([]);
  }, 60_000);
});
