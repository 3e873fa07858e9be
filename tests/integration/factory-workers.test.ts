import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { factoryWorkersHandler } from '#functions/http/factory-workers';
import { jobQueueHandler } from '#functions/http/job-queue';
import { taskQueueHandler } from '#functions/http/task-queue';
import { factoryPoolHandler } from '#functions/schedule/factory-pool';
import { type FactoryRuntime, startFactory } from '#lib/factory/factory-pool';
import type { JobHandlers } from '#lib/factory/handler-types';
import { defaultHandlers } from '#lib/factory/job-handlers';
import { claimFromQueue } from '#lib/jobs/job-claim';
import { failHeld } from '#lib/jobs/job-finish';
import { fixedClock } from '#lib/kernel/clock';
import { contextWith } from '#tests/support/context';
import { call, newUser, type TestUser } from '#tests/support/identity';

/**
 * The factory workers against DynamoDB Local: a runtime in this process (as npm start runs it) claims
 * the job queue's jobs and runs them by type, sized by the organization's setting; GET /factory-workers
 * shows the workers and what they hold; stats and the health summary with its alerts. Every wait is for
 * a condition (vi.waitFor); time the alerts depend on moves by the clock port.
 */

beforeAll(async () => {
  await newUser('instanceadmin');
});

const jobQueue = jobQueueHandler();
const taskQueue = taskQueueHandler();
const workers = factoryWorkersHandler();

let runtime: FactoryRuntime | undefined;

afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
});

/** The factory, looking for work every 20 ms and recording its pools every 100 ms. */
const startTestFactory = (handlers: JobHandlers = defaultHandlers) => {
  runtime = startFactory(contextWith({}), { handlers, pollMs: 20, heartbeatMs: 100 });
  return runtime;
};

const submit = async (user: TestUser, body: Record<string, unknown>) => {
  const response = await call(jobQueue, 'POST', '/job-queue/submit', { token: user.token, body });
  if (response.status !== 201) throw new Error(`submit failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: string };
};

const jobOf = async (user: TestUser, id: string) =>
  (await call(taskQueue, 'GET', `/task-queue/${id}`, { token: user.token })).body.data;

const finished = (user: TestUser, ids: string[]) =>
  vi.waitFor(
    async () => {
      const jobs = await Promise.all(ids.map((id) => jobOf(user, id)));
      for (const job of jobs) expect(['completed', 'dead']).toContain(job.status);
      return jobs;
    },
    { timeout: 15_000, interval: 50 },
  );

/** A handler that holds its jobs until the test opens the gate, counting how many it holds at once. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const seen = { now: 0, most: 0 };
  const hold = async () => {
    seen.now += 1;
    seen.most = Math.max(seen.most, seen.now);
    await opened;
    seen.now -= 1;
    return { held: true };
  };
  return { hold, open, seen };
}

describe('the factory runtime', () => {
  it('runs the job queue’s jobs by type, and makes a job of an unknown type dead at once, saying why', async () => {
    // Prepare
    const owner = await newUser('owner');
    const echo = await submit(owner, { task_type: 'echo', payload: { greeting: 'hi' } });
    const noop = await submit(owner, { task_type: 'noop', queue_name: 'chores' });
    const brand = await submit(owner, {
      task_type: 'brand-assets',
      payload: { product_slug: 'shop', brand_color: '#ff0000', accent_color: '#ffffff' },
    });
    const unknown = await submit(owner, { task_type: 'teleport', max_attempts: 5 });

    // Act
    startTestFactory();
    const [echoed, nothing, assets, dead] = await finished(owner, [echo.id, noop.id, brand.id, unknown.id]);

    // Assess
    expect(echoed).toMatchObject({ status: 'completed', attempts: 1, result: { greeting: 'hi' } });
    expect(nothing).toMatchObject({ status: 'completed', result: {} });
    expect(assets).toMatchObject({
      status: 'completed',
      result: {
        kind: 'palette',
        product_slug: 'shop',
        brand: { base: '#ff0000', light: '#ff6666', dark: '#b30000', text: '#000000', contrast_ratio: 5.25 },
        accent: { base: '#ffffff', text: '#000000', contrast_ratio: 21 },
      },
    });
    expect(dead).toMatchObject({
      status: 'dead',
      attempts: 1,
      last_error: 'No factory handler for job type "teleport"; the factory runs brand-assets, echo, noop',
    });
  });

  it('runs the brand-assets job a product’s colour change queues', async () => {
    // Prepare
    const owner = await newUser('owner');
    const { handler: products } = await import('#functions/http/products');
    await call(products, 'POST', '/products', { token: owner.token, body: { name: 'Lamp', brand_color: '#000000' } });
    const changed = await call(products, 'PATCH', '/products/lamp', {
      token: owner.token,
      body: { brand_color: '#336699' },
    });
    const jobId = changed.body.meta.follow_up[0].id as string;

    // Act
    startTestFactory();
    const [job] = await finished(owner, [jobId]);

    // Assess
    expect(job).toMatchObject({
      task_type: 'brand-assets',
      status: 'completed',
      result: { kind: 'palette', product_slug: 'lamp', brand: { base: '#336699', text: '#ffffff' }, accent: null },
    });
  });

  it('sizes the pool by the organization’s setting, and shows the workers and the jobs they hold', async () => {
    // Prepare
    const owner = await newUser('owner');
    const configured = await call(workers, 'PATCH', '/factory-workers/config', {
      token: owner.token,
      body: { worker_count: 3, max_concurrent: 2 },
    });
    const { hold, open, seen } = gate();
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) ids.push((await submit(owner, { task_type: 'hold' })).id);

    // Act
    startTestFactory({ ...defaultHandlers, hold });
    const busy = await vi.waitFor(
      async () => {
        const view = (await call(workers, 'GET', '/factory-workers', { token: owner.token })).body.data;
        expect(view.workers.flatMap((worker: { jobs: unknown[] }) => worker.jobs)).toHaveLength(2);
        return view;
      },
      { timeout: 15_000, interval: 50 },
    );
    const stats = (await call(workers, 'GET', '/factory-workers/stats', { token: owner.token })).body.data;
    open();
    const jobs = await finished(owner, ids);

    // Assess
    expect(configured.status).toBe(200);
    expect(configured.body.data).toEqual({ worker_count: 3, max_concurrent: 2, updated_at: expect.any(String) });
    expect(busy).toMatchObject({
      running: true,
      config: { worker_count: 3, max_concurrent: 2 },
      pools: [{ runtime_id: runtime?.runtimeId, worker_count: 3, max_concurrent: 2 }],
      unattended_jobs: [],
    });
    expect(busy.workers).toHaveLength(3);
    const held = busy.workers.flatMap((worker: { jobs: Array<{ id: string; task_type: string }> }) => worker.jobs);
    expect(
      held.every((job: { id: string; task_type: string }) => ids.includes(job.id) && job.task_type === 'hold'),
    ).toBe(true);
    expect(stats).toMatchObject({ running: true, workers: 3, jobs: { running: 2, queued: 3 } });
    expect(stats.busy_workers + stats.idle_workers).toBe(3);
    expect(seen.most).toBe(2);
    expect(jobs.every((job: { status: string }) => job.status === 'completed')).toBe(true);
  });

  it('applies a changed setting to a running pool at its next heartbeat', async () => {
    // Prepare
    const owner = await newUser('owner');
    const { hold, open } = gate();
    const first = await submit(owner, { task_type: 'hold' });
    startTestFactory({ ...defaultHandlers, hold });
    await vi.waitFor(async () => expect((await jobOf(owner, first.id)).status).toBe('running'), { timeout: 15_000 });

    // Act
    await call(workers, 'PATCH', '/factory-workers/config', { token: owner.token, body: { worker_count: 6 } });
    const grown = await vi.waitFor(
      async () => {
        const view = (await call(workers, 'GET', '/factory-workers', { token: owner.token })).body.data;
        expect(view.workers).toHaveLength(6);
        return view;
      },
      { timeout: 15_000, interval: 50 },
    );
    open();

    // Assess
    expect(grown.config).toMatchObject({ worker_count: 6, max_concurrent: 8 });
    expect(grown.pools[0]).toMatchObject({ worker_count: 6, max_concurrent: 8 });
  });

  it('refuses a setting out of range or empty with 400', async () => {
    // Prepare
    const owner = await newUser('owner');
    const patch = (body: Record<string, unknown>) =>
      call(workers, 'PATCH', '/factory-workers/config', { token: owner.token, body });

    // Act
    const answers = await Promise.all([
      patch({ worker_count: 0 }),
      patch({ worker_count: 33 }),
      patch({ max_concurrent: 101 }),
      patch({ max_concurrent: 1.5 }),
      patch({}),
    ]);
    const unchanged = (await call(workers, 'GET', '/factory-workers', { token: owner.token })).body.data.config;

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([400, 400, 400, 400, 400]);
    expect(unchanged).toEqual({ worker_count: 4, max_concurrent: 8, updated_at: null });
  });

  it('runs as the scheduled function for its time, then stops and leaves no pool behind', async () => {
    // Prepare
    const owner = await newUser('owner');
    const job = await submit(owner, { task_type: 'echo', payload: { n: 1 } });
    const scheduled = factoryPoolHandler({ runMs: 3_000, pollMs: 20, heartbeatMs: 100 });

    // Act
    const report = await scheduled();
    const after = (await call(workers, 'GET', '/factory-workers', { token: owner.token })).body.data;

    // Assess
    expect(report.completed).toBeGreaterThanOrEqual(1);
    expect((await jobOf(owner, job.id)).status).toBe('completed');
    expect(after).toMatchObject({ running: false, pools: [], workers: [] });
  });
});

describe('GET /factory-workers/health-summary', () => {
  it('is healthy with nothing to do', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const health = await call(workers, 'GET', '/factory-workers/health-summary', { token: owner.token });

    // Assess
    expect(health.status).toBe(200);
    expect(health.body.data).toMatchObject({
      status: 'healthy',
      alerts: [],
      pool: { running: false, workers: 0, busy_workers: 0 },
      backlog: { pending: 0, queued: 0, oldest_waiting_seconds: null },
    });
  });

  it('alerts on jobs past their lease, dead jobs and a backlog no worker takes', async () => {
    // Prepare
    const clock = fixedClock(new Date());
    const handler = factoryWorkersHandler({ ports: { clock } });
    const owner = await newUser('owner');
    const stuck = await submit(owner, { task_type: 'echo', queue_name: 'held', timeout_seconds: 10 });
    const doomed = await submit(owner, { task_type: 'echo', queue_name: 'doomed' });
    await claimFromQueue(
      { orgId: owner.orgId, lane: 'job', queue: 'held' },
      { workerId: 'gone', batchSize: 1 },
      clock.now(),
    );
    const [dying] = await claimFromQueue(
      { orgId: owner.orgId, lane: 'job', queue: 'doomed' },
      { workerId: 'w', batchSize: 1 },
      clock.now(),
    );
    if (!dying) throw new Error('the doomed job was not claimed');
    await failHeld(owner.orgId, dying, { error: 'bad input', permanent: true }, clock.now());
    await submit(owner, { task_type: 'echo', queue_name: 'waiting' });
    clock.advance(120_000);

    // Act
    const health = await call(workers, 'GET', '/factory-workers/health-summary', { token: owner.token });
    const later = await call(handler, 'GET', '/factory-workers/health-summary', { token: owner.token });

    // Assess
    expect(health.body.data.alerts.map((alert: { code: string }) => alert.code)).toEqual(['dead_jobs']);
    expect(later.body.data).toMatchObject({
      status: 'critical',
      pool: { running: false, workers: 0, busy_workers: 0 },
      backlog: { pending: 2, queued: 1 },
    });
    expect(later.body.data.alerts).toEqual([
      {
        code: 'stuck_jobs',
        severity: 'warning',
        message: expect.stringMatching(/^1 running job\(s\) are past their lease/),
        count: 1,
        job_ids: [stuck.id],
      },
      { code: 'dead_jobs', severity: 'warning', message: expect.any(String), count: 1, job_ids: [] },
      {
        code: 'idle_pool_with_backlog',
        severity: 'critical',
        message: expect.stringMatching(
          /^No factory pool is running while jobs wait to be claimed, the longest for 1[12]\d s$/,
        ),
        count: 1,
        job_ids: [],
      },
    ]);
    expect(doomed.id).toBe(dying?.id);
  });
});
