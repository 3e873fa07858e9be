import type { SQSEvent } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { discoveryEnginesHandler } from '#functions/http/discovery-engines';
import { handler as tokens } from '#functions/http/tokens';
import { discoveryRunConsumer } from '#functions/queue/discovery-run';
import { discoveryReconcilerHandler } from '#functions/schedule/discovery-reconciler';
import { discoveryRunHandler } from '#functions/schedule/discovery-run';
import { type MemoryQueue, type MemoryQueueOptions, memoryQueue } from '#lib/adapters/local/memory-queue';
import { claimRun } from '#lib/discovery/run-records';
import { AgentRunError } from '#lib/errors';
import { fixedClock } from '#lib/kernel/clock';
import type { AgentRunner, AgentRunRequest, MessageQueue } from '#lib/kernel/ports';
import { activityOf } from '#tests/support/activity';
import { loadEvent } from '#tests/support/events';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import { recordingScheduler } from '#tests/support/scheduler';

/**
 * Discovery runs end to end in one process: the discovery-engines function queues a run, the in-process
 * queue hands it to the real run worker, which runs a test runner and writes to DynamoDB Local; the
 * schedule's target runs engines as their schedule would. Figures (tokens, cost, compute minutes, waste)
 * are checked against the definitions of lib/discovery/run-cost.ts: $0.02 per 1,000 tokens.
 */

beforeAll(async () => {
  await newUser('instanceadmin');
});

/** What the test runner answers for an engine (by slug): findings, tokens, how long it takes, or a failure. */
interface Behaviour {
  findings?: number;
  tokens?: number;
  takesMs?: number;
  fails?: string;
}

interface TestRunner extends AgentRunner {
  requests: AgentRunRequest[];
}

/** A runner that advances `clock` by the run's duration, as a model call takes time. */
function testRunner(clock: ReturnType<typeof fixedClock>, behaviours: Record<string, Behaviour> = {}): TestRunner {
  const requests: AgentRunRequest[] = [];
  return {
    kind: 'local',
    requests,
    async run(request) {
      requests.push(request);
      const slug = String((request.input.engine as { slug: string }).slug);
      const behaviour = behaviours[slug] ?? {};
      clock.advance(behaviour.takesMs ?? 60_000);
      if (behaviour.fails) throw new AgentRunError(behaviour.fails, { retryable: false });
      const tokens = behaviour.tokens ?? 1_000;
      const findings = Array.from({ length: behaviour.findings ?? 2 }, (_, index) => ({
        title: `finding ${index + 1}`,
        detail: 'worth a look',
      }));
      return {
        output: { summary: `${slug}: ${findings.length} findings`, findings },
        usage: { input_tokens: tokens - 100, output_tokens: 100, total_tokens: tokens },
        model: 'test-model',
      };
    },
  };
}

const queues: MemoryQueue[] = [];
afterEach(() => {
  for (const queue of queues.splice(0)) queue.close();
});

/** The API, a queue whose run consumer is the real worker with a test runner, and the schedule's target. */
function service(behaviours: Record<string, Behaviour> = {}, options: { queue?: MessageQueue } = {}) {
  const clock = fixedClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  const runner = testRunner(clock, behaviours);
  const scheduler = recordingScheduler();
  const consumers: MemoryQueueOptions['consumers'] = {};
  const memory = memoryQueue({ consumers, visibilityTimeoutSeconds: 0.05 });
  queues.push(memory);
  consumers['discovery-run'] = discoveryRunConsumer({ runner, clock });
  const queue = options.queue ?? memory;
  return {
    clock,
    runner,
    scheduler,
    queue: memory,
    api: discoveryEnginesHandler({ ports: { scheduler, queue, clock } }),
    tick: discoveryRunHandler({ runner, scheduler, clock }),
  };
}

type Service = ReturnType<typeof service>;

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function createEngine(svc: Service, user: TestUser, body: Record<string, unknown>) {
  const response = await call(svc.api, 'POST', '/discovery-engines', as(user, { body }));
  if (response.status !== 201) throw new Error(`create failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; slug: string };
}

/** Queues a run and waits until the worker has ended it. */
async function runOnce(svc: Service, user: TestUser, slug: string) {
  const response = await call(svc.api, 'POST', `/discovery-engines/${slug}/run`, as(user));
  if (response.status !== 200) throw new Error(`run failed: ${JSON.stringify(response.body)}`);
  await svc.queue.drain();
  return response.body.data as { id: number };
}

const detail = async (svc: Service, user: TestUser, slug: string) =>
  (await call(svc.api, 'GET', `/discovery-engines/${slug}`, as(user))).body.data;

const balanceOf = async (user: TestUser): Promise<number> =>
  (await call(tokens, 'GET', '/tokens/balance', as(user))).body.data.balance;

async function consume(user: TestUser, amount: number): Promise<void> {
  const response = await call(tokens, 'POST', '/tokens/consume', as(user, { body: { amount, action: 'drain' } }));
  if (response.status !== 200) throw new Error(`consume failed: ${JSON.stringify(response.body)}`);
}

describe('POST /discovery-engines/{slug}/run', () => {
  it('queues a run the worker executes with the engine’s model, recorded with tokens, cost and compute', async () => {
    // Prepare
    const owner = await newUser('owner');
    const svc = service({ radar: { findings: 3, tokens: 1_500, takesMs: 90_000 } });
    await createEngine(svc, owner, {
      name: 'Radar',
      layer: 'market',
      description: 'New competitors in the EU',
      model: 'big-model',
    });
    const before = await balanceOf(owner);
    const queuedAt = svc.clock.now().toISOString();

    // Act
    const response = await call(svc.api, 'POST', '/discovery-engines/radar/run', as(owner));
    await svc.queue.drain();
    const engine = await detail(svc, owner, 'radar');

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        id: expect.any(Number),
        engine: 'radar',
        trigger: 'manual',
        status: 'queued',
        model: 'big-model',
        usage: null,
        tokens_used: 0,
        cost_usd: 0,
        compute_minutes: 0,
        findings: null,
        summary: null,
        error: null,
        queued_at: queuedAt,
        started_at: null,
        finished_at: null,
      },
    });
    const finishedAt = new Date(Date.parse(queuedAt) + 90_000).toISOString();
    expect(engine.recent_runs).toEqual([
      {
        ...response.body.data,
        status: 'succeeded',
        model: 'test-model',
        usage: { input_tokens: 1_400, output_tokens: 100, total_tokens: 1_500 },
        tokens_used: 1_500,
        cost_usd: 0.03,
        compute_minutes: 1.5,
        findings: 3,
        summary: 'radar: 3 findings',
        started_at: queuedAt,
        finished_at: finishedAt,
      },
    ]);
    expect(engine.stats).toEqual({
      runs: 1,
      succeeded: 1,
      failed: 0,
      empty: 0,
      findings: 3,
      tokens_used: 1_500,
      cost_usd: 0.03,
      compute_minutes: 1.5,
      last_run_at: finishedAt,
      last_run_status: 'succeeded',
    });
    expect(await balanceOf(owner)).toBe(before - 1_500);
    const [request] = svc.runner.requests;
    expect(request?.agent).toMatchObject({ name: 'discovery-radar', model: 'big-model' });
    expect(request?.instructions).toContain('in the layer market');
    expect(request?.instructions).toContain('New competitors in the EU');
    const ledger = await call(tokens, 'GET', '/tokens/transactions', as(owner, { query: { type: 'consume' } }));
    expect(ledger.body.data[0]).toMatchObject({
      amount: -1_500,
      action: 'discovery_run',
      reference_id: `discovery-run-${engine.id}-${response.body.data.id}`,
    });
    const actions = (await activityOf(owner.orgId)).map((entry) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(['discovery_engine.run_queued', 'discovery_engine.run_succeeded']));
  });

  it('records a failed run with its error and compute time, and consumes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const svc = service({ broken: { fails: 'The provider refused the model', takesMs: 30_000 } });
    await createEngine(svc, owner, { name: 'Broken', layer: 'ops' });
    const before = await balanceOf(owner);

    // Act
    const run = await runOnce(svc, owner, 'broken');
    const engine = await detail(svc, owner, 'broken');

    // Assess
    expect(engine.recent_runs).toEqual([
      expect.objectContaining({
        id: run.id,
        status: 'failed',
        error: 'The provider refused the model',
        usage: null,
        tokens_used: 0,
        cost_usd: 0,
        compute_minutes: 0.5,
        findings: null,
      }),
    ]);
    expect(engine.stats).toMatchObject({ runs: 1, succeeded: 0, failed: 1, tokens_used: 0, last_run_status: 'failed' });
    expect(await balanceOf(owner)).toBe(before);
    const actions = (await activityOf(owner.orgId)).map((entry) => entry.action);
    expect(actions).toContain('discovery_engine.run_failed');
  });

  it('fails a run the balance cannot pay, saying so, and consumes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const svc = service({ radar: { tokens: 1_000 } });
    await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    await consume(owner, (await balanceOf(owner)) - 400);

    // Act
    await runOnce(svc, owner, 'radar');
    const engine = await detail(svc, owner, 'radar');

    // Assess
    expect(engine.recent_runs[0]).toMatchObject({
      status: 'failed',
      error: 'The token balance (400) cannot pay for the run (1000 tokens)',
      usage: { total_tokens: 1_000 },
      tokens_used: 0,
      cost_usd: 0,
    });
    expect(engine.stats).toMatchObject({ runs: 1, failed: 1, tokens_used: 0 });
    expect(await balanceOf(owner)).toBe(400);
  });

  it('fails a run at once when the balance is empty, without calling the model', async () => {
    // Prepare
    const owner = await newUser('owner');
    const svc = service();
    await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    await consume(owner, await balanceOf(owner));

    // Act
    await runOnce(svc, owner, 'radar');
    const engine = await detail(svc, owner, 'radar');

    // Assess
    expect(engine.recent_runs[0]).toMatchObject({
      status: 'failed',
      error: 'The token balance (0) cannot pay for a run',
      compute_minutes: 0,
    });
    expect(svc.runner.requests).toEqual([]);
  });

  it('answers 503 and ends the run as failed when the queue refuses it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const refusing: MessageQueue = {
      send: async () => {
        throw new Error('queue unavailable');
      },
    };
    const svc = service({}, { queue: refusing });
    await createEngine(svc, owner, { name: 'Radar', layer: 'market' });

    // Act
    const response = await call(svc.api, 'POST', '/discovery-engines/radar/run', as(owner));
    const engine = await detail(svc, owner, 'radar');

    // Assess
    expect(response.status).toBe(503);
    expect(response.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The run could not be queued; try again',
    });
    expect(engine.recent_runs).toEqual([
      expect.objectContaining({
        status: 'failed',
        error: 'The run could not be queued: queue unavailable',
        started_at: null,
      }),
    ]);
    expect(engine.stats).toMatchObject({ runs: 1, failed: 1, compute_minutes: 0 });
  });

  it('runs the model once for a message delivered twice', async () => {
    // Prepare
    const owner = await newUser('owner');
    const holding = { send: async () => {} };
    const svc = service({}, { queue: holding });
    const engine = await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    const queued = (await call(svc.api, 'POST', '/discovery-engines/radar/run', as(owner))).body.data;
    const event = loadEvent<SQSEvent>('sqs/discovery-run');
    const [record] = event.Records as [SQSEvent['Records'][number]];
    record.body = JSON.stringify({ org_id: owner.orgId, engine_id: engine.id, run_id: queued.id });
    const worker = discoveryRunConsumer({ runner: svc.runner, clock: svc.clock });

    // Act
    const results = await Promise.all([worker(structuredClone(event)), worker(structuredClone(event))]);
    const after = await detail(svc, owner, 'radar');

    // Assess
    expect(results).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    expect(svc.runner.requests).toHaveLength(1);
    expect(after.stats).toMatchObject({ runs: 1, succeeded: 1 });
  });

  it('answers 404 for an unknown engine and 400 for a bad slug', async () => {
    // Prepare
    const owner = await newUser('owner');
    const svc = service();

    // Act
    const unknown = await call(svc.api, 'POST', '/discovery-engines/nope/run', as(owner));
    const bad = await call(svc.api, 'POST', '/discovery-engines/NOT_OK/run', as(owner));

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: 'NOT_FOUND', message: 'Discovery engine not found', details: [] } });
    expect(bad.status).toBe(400);
  });
});

describe('GET /discovery-engines/{slug}', () => {
  it('shows the 20 newest runs, newest first', async () => {
    // Prepare
    const owner = await newUser('owner');
    const svc = service({ radar: { tokens: 10 } });
    await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    const ids: number[] = [];
    for (let index = 0; index < 22; index += 1) ids.push((await runOnce(svc, owner, 'radar')).id);

    // Act
    const engine = await detail(svc, owner, 'radar');

    // Assess
    expect(engine.recent_runs.map((run: { id: number }) => run.id)).toEqual(ids.reverse().slice(0, 20));
    expect(engine.stats).toMatchObject({ runs: 22, succeeded: 22, tokens_used: 220 });
  });
});

describe('run stats and efficiency', () => {
  it('counts runs, tokens, cost, compute minutes and waste per engine as documented', async () => {
    // Prepare: radar finds things (2 runs), then finds nothing once; probe fails once.
    const owner = await newUser('owner');
    const behaviours: Record<string, Behaviour> = {
      radar: { findings: 3, tokens: 1_000, takesMs: 90_000 },
      probe: { fails: 'timed out', takesMs: 120_000 },
    };
    const svc = service(behaviours);
    await createEngine(svc, owner, { name: 'Radar', layer: 'market', model: 'big-model' });
    await createEngine(svc, owner, { name: 'Probe', layer: 'codebase' });
    await createEngine(svc, owner, { name: 'Idle', layer: 'ops' });
    await runOnce(svc, owner, 'radar');
    await runOnce(svc, owner, 'radar');
    behaviours.radar = { findings: 0, tokens: 500, takesMs: 60_000 };
    await runOnce(svc, owner, 'radar');
    await runOnce(svc, owner, 'probe');

    // Act
    const list = await call(svc.api, 'GET', '/discovery-engines', as(owner));
    const efficiency = await call(svc.api, 'GET', '/discovery-engines/efficiency', as(owner));

    // Assess
    expect(list.body.data.map((engine: { slug: string; stats: unknown }) => [engine.slug, engine.stats])).toEqual([
      [
        'radar',
        expect.objectContaining({
          runs: 3,
          succeeded: 3,
          failed: 0,
          empty: 1,
          findings: 6,
          tokens_used: 2_500,
          cost_usd: 0.05,
          compute_minutes: 4,
          last_run_status: 'succeeded',
        }),
      ],
      [
        'probe',
        expect.objectContaining({ runs: 1, succeeded: 0, failed: 1, tokens_used: 0, cost_usd: 0, compute_minutes: 2 }),
      ],
      ['idle', expect.objectContaining({ runs: 0, last_run_at: null })],
    ]);
    expect(efficiency.status).toBe(200);
    expect(efficiency.body.data.price).toEqual({
      per_1k_tokens_usd: 0.02,
      currency: 'usd',
      basis: expect.any(String),
    });
    expect(efficiency.body.data.engines).toEqual([
      {
        slug: 'radar',
        name: 'Radar',
        layer: 'market',
        model: 'big-model',
        runs: 3,
        succeeded: 3,
        failed: 0,
        empty: 1,
        findings: 6,
        tokens_used: 2_500,
        cost_usd: 0.05,
        compute_minutes: 4,
        // The empty run: its 500 tokens, their $0.01 and its minute.
        waste: { runs: 1, tokens: 500, cost_usd: 0.01, compute_minutes: 1 },
        waste_share: 0.2,
        cost_per_finding_usd: 0.008333,
      },
      {
        slug: 'idle',
        name: 'Idle',
        layer: 'ops',
        model: null,
        runs: 0,
        succeeded: 0,
        failed: 0,
        empty: 0,
        findings: 0,
        tokens_used: 0,
        cost_usd: 0,
        compute_minutes: 0,
        waste: { runs: 0, tokens: 0, cost_usd: 0, compute_minutes: 0 },
        waste_share: null,
        cost_per_finding_usd: null,
      },
      {
        slug: 'probe',
        name: 'Probe',
        layer: 'codebase',
        model: null,
        runs: 1,
        succeeded: 0,
        failed: 1,
        empty: 0,
        findings: 0,
        tokens_used: 0,
        cost_usd: 0,
        compute_minutes: 2,
        // A failed run consumes no tokens: its two minutes are what it wasted.
        waste: { runs: 1, tokens: 0, cost_usd: 0, compute_minutes: 2 },
        waste_share: null,
        cost_per_finding_usd: null,
      },
    ]);
    expect(efficiency.body.data.totals).toEqual({
      runs: 4,
      succeeded: 3,
      failed: 1,
      empty: 1,
      findings: 6,
      tokens_used: 2_500,
      cost_usd: 0.05,
      compute_minutes: 6,
      waste: { runs: 2, tokens: 500, cost_usd: 0.01, compute_minutes: 3 },
      waste_share: 0.2,
      cost_per_finding_usd: 0.008333,
    });
  });

  it('keeps the stats of a deleted engine’s runs out of a new engine of the same slug', async () => {
    // Prepare: a run still queued when its engine is deleted and created again.
    const owner = await newUser('owner');
    const holding = { send: async () => {} };
    const svc = service({}, { queue: holding });
    const first = await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    const queued = (await call(svc.api, 'POST', '/discovery-engines/radar/run', as(owner))).body.data;
    await call(svc.api, 'DELETE', '/discovery-engines/radar', as(owner));
    await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    const event = loadEvent<SQSEvent>('sqs/discovery-run');
    const [record] = event.Records as [SQSEvent['Records'][number]];
    record.body = JSON.stringify({ org_id: owner.orgId, engine_id: first.id, run_id: queued.id });

    // Act
    await discoveryRunConsumer({ runner: svc.runner, clock: svc.clock })(event);
    const engine = await detail(svc, owner, 'radar');

    // Assess
    expect(svc.runner.requests).toEqual([]);
    expect(engine.stats.runs).toBe(0);
    expect(engine.recent_runs).toEqual([]);
  });
});

describe('scheduled runs (the discovery-run target)', () => {
  it('runs the engine with the payload its schedule was put with, and records the run as scheduled', async () => {
    // Prepare
    const owner = await newUser('owner');
    const svc = service({ radar: { findings: 1, tokens: 200 } });
    const engine = await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    const payload = svc.scheduler.schedules.get(`discovery-${owner.orgId}-${engine.id}`)?.spec.payload;

    // Act
    const outcome = await svc.tick(payload);
    const after = await detail(svc, owner, 'radar');

    // Assess
    expect(outcome).toEqual({ outcome: 'succeeded', run_id: expect.any(Number), tokens: 200, findings: 1 });
    expect(after.recent_runs).toEqual([expect.objectContaining({ trigger: 'schedule', status: 'succeeded' })]);
    expect(after.stats).toMatchObject({ runs: 1, succeeded: 1, tokens_used: 200 });
  });

  it('skips a disabled engine and one whose latest run is under way, and drops a malformed event', async () => {
    // Prepare
    const owner = await newUser('owner');
    const holding = { send: async () => {} };
    const svc = service({}, { queue: holding });
    const off = await createEngine(svc, owner, { name: 'Off', layer: 'ops', enabled: false });
    const busy = await createEngine(svc, owner, { name: 'Busy', layer: 'ops' });
    await call(svc.api, 'POST', '/discovery-engines/busy/run', as(owner));

    // Act
    const disabled = await svc.tick({ org_id: owner.orgId, engine_id: off.id, slug: 'off' });
    const underWay = await svc.tick({ org_id: owner.orgId, engine_id: busy.id, slug: 'busy' });
    const malformed = await svc.tick({ org_id: owner.orgId });

    // Assess
    expect(disabled).toEqual({ outcome: 'skipped', reason: 'disabled' });
    expect(underWay).toEqual({ outcome: 'skipped', run_id: expect.any(Number), reason: 'busy' });
    expect(malformed).toEqual({ outcome: 'invalid_event' });
    expect(svc.runner.requests).toEqual([]);
  });
});

describe('the discovery reconciler and runs', () => {
  it('ends as failed a run whose queue message was lost, once it has waited 15 minutes', async () => {
    // Prepare
    const owner = await newUser('owner');
    const losing = { send: async () => {} };
    const svc = service({}, { queue: losing });
    await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    await call(svc.api, 'POST', '/discovery-engines/radar/run', as(owner));
    const reconcile = (minutes: number) =>
      discoveryReconcilerHandler({
        ports: { scheduler: svc.scheduler, clock: fixedClock(new Date(svc.clock.now().getTime() + minutes * 60_000)) },
        orgId: owner.orgId,
      })();

    // Act
    const early = await reconcile(10);
    const late = await reconcile(16);
    const engine = await detail(svc, owner, 'radar');

    // Assess
    expect(early.runs_failed).toBe(0);
    expect(late.runs_failed).toBe(1);
    expect(engine.recent_runs[0]).toMatchObject({
      status: 'failed',
      error: 'The run never started: its queue message was lost',
    });
    expect(engine.stats).toMatchObject({ runs: 1, failed: 1 });
  });

  it('ends as failed a run whose worker stopped mid-run, once it has run longer than a worker may', async () => {
    // Prepare: the run is claimed as its worker would, and the worker never comes back.
    const owner = await newUser('owner');
    const losing = { send: async () => {} };
    const svc = service({}, { queue: losing });
    const engine = await createEngine(svc, owner, { name: 'Radar', layer: 'market' });
    const queued = (await call(svc.api, 'POST', '/discovery-engines/radar/run', as(owner))).body.data;
    await claimRun({ orgId: owner.orgId, engineId: engine.id, runId: queued.id, at: svc.clock.now().toISOString() });
    const reconcile = (seconds: number) =>
      discoveryReconcilerHandler({
        ports: { scheduler: svc.scheduler, clock: fixedClock(new Date(svc.clock.now().getTime() + seconds * 1000)) },
        orgId: owner.orgId,
      })();

    // Act
    const early = await reconcile(300);
    const late = await reconcile(361);
    const after = await detail(svc, owner, 'radar');

    // Assess
    expect(early.runs_failed).toBe(0);
    expect(late.runs_failed).toBe(1);
    expect(after.recent_runs[0]).toMatchObject({
      status: 'failed',
      error: 'The run was interrupted: its worker stopped before it ended',
      tokens_used: 0,
    });
    expect(after.stats).toMatchObject({ runs: 1, failed: 1, compute_minutes: 6.017 });
  });
});
