import { beforeAll, describe, expect, it } from 'vitest';
import { jobQueueHandler } from '#functions/http/job-queue';
import { claimFromQueue } from '#lib/jobs/job-claim';
import { completeHeld, failHeld } from '#lib/jobs/job-finish';
import type { JobItem } from '#lib/jobs/job-keys';
import { fixedClock } from '#lib/kernel/clock';
import { call, newUser, type TestUser } from '#tests/support/identity';

/**
 * The job queue (`/job-queue`) against DynamoDB Local: scheduled jobs, stats and lists. Its jobs are
 * claimed by the factory workers; here the test claims them as a factory worker does (claimFromQueue),
 * with the clock port moved by the test instead of sleeping.
 */

beforeAll(async () => {
  await newUser('instanceadmin');
});

function clocked(start = new Date()) {
  const clock = fixedClock(start);
  return { clock, handler: jobQueueHandler({ ports: { clock } }) };
}

type Handler = ReturnType<typeof jobQueueHandler>;

const post = (handler: Handler, user: TestUser, path: string, body: Record<string, unknown>) =>
  call(handler, 'POST', path, { token: user.token, body });

/** Claims as a factory worker does: the job lane, one queue. */
const factoryClaim = (user: TestUser, queue: string, now: Date, batchSize = 10) =>
  claimFromQueue({ orgId: user.orgId, lane: 'job', queue }, { workerId: 'factory-test', batchSize }, now);

describe('POST /job-queue/submit-scheduled', () => {
  it('keeps a scheduled job from every claim before run_at, and hands it out from then on', async () => {
    // Prepare
    const { clock, handler } = clocked();
    const owner = await newUser('owner');
    const runAt = new Date(clock.now().getTime() + 10 * 60_000);
    const scheduled = await post(handler, owner, '/job-queue/submit-scheduled', {
      task_type: 'echo',
      queue_name: 'later',
      payload: { hello: 'world' },
      run_at: runAt.toISOString(),
    });

    // Act
    const atOnce = await factoryClaim(owner, 'later', clock.now());
    clock.set(new Date(runAt.getTime() - 1));
    const justBefore = await factoryClaim(owner, 'later', clock.now());
    clock.set(runAt);
    const atRunAt = await factoryClaim(owner, 'later', clock.now());

    // Assess
    expect(scheduled.status).toBe(201);
    expect(scheduled.body.data).toMatchObject({
      status: 'scheduled',
      run_at: runAt.toISOString(),
      available_at: runAt.toISOString(),
      queue_name: 'later',
    });
    expect(atOnce).toEqual([]);
    expect(justBefore).toEqual([]);
    expect(atRunAt.map((job) => [job.id, job.status, job.attempts])).toEqual([[scheduled.body.data.id, 'running', 1]]);
  });

  it('answers 400 for a run_at that is not in the future, and names a malformed one', async () => {
    // Prepare
    const { clock, handler } = clocked();
    const owner = await newUser('owner');

    // Act
    const past = await post(handler, owner, '/job-queue/submit-scheduled', {
      task_type: 'echo',
      run_at: new Date(clock.now().getTime() - 1000).toISOString(),
    });
    const now = await post(handler, owner, '/job-queue/submit-scheduled', {
      task_type: 'echo',
      run_at: clock.now().toISOString(),
    });
    const malformed = await post(handler, owner, '/job-queue/submit-scheduled', {
      task_type: 'echo',
      run_at: 'tomorrow',
    });
    const missing = await post(handler, owner, '/job-queue/submit-scheduled', { task_type: 'echo' });

    // Assess
    for (const refused of [past, now]) {
      expect(refused.status).toBe(400);
      expect(refused.body.error).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'run_at must be in the future',
        details: [{ path: 'body.run_at', message: 'must be in the future' }],
      });
    }
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details[0].path).toBe('body.run_at');
    expect(missing.status).toBe(400);
  });

  it('answers a repeated idempotency key with the first scheduled job and 200', async () => {
    // Prepare
    const { clock, handler } = clocked();
    const owner = await newUser('owner');
    const body = {
      task_type: 'noop',
      idempotency_key: 'nightly-2030-01-01',
      run_at: new Date(clock.now().getTime() + 3_600_000).toISOString(),
    };

    // Act
    const first = await post(handler, owner, '/job-queue/submit-scheduled', body);
    const repeat = await post(handler, owner, '/job-queue/submit-scheduled', body);

    // Assess
    expect(first.status).toBe(201);
    expect(repeat.status).toBe(200);
    expect(repeat.body.data.id).toBe(first.body.data.id);
  });
});

describe('GET /job-queue/stats and GET /job-queue/{queue}/jobs', () => {
  /** Two queues in every status: alpha (2 queued, 1 running, 1 completed, 1 scheduled), beta (1 dead, 1 retrying). */
  async function prepareQueues() {
    const { clock, handler } = clocked();
    const owner = await newUser('owner');
    const submit = (queue: string, extra: Record<string, unknown> = {}) =>
      post(handler, owner, '/job-queue/submit', { task_type: 'echo', queue_name: queue, ...extra });
    const first = (await submit('alpha', { priority: 5 })).body.data;
    clock.advance(1000);
    await submit('alpha', { priority: 5 });
    clock.advance(1000);
    await submit('alpha');
    clock.advance(1000);
    await submit('alpha');
    await post(handler, owner, '/job-queue/submit-scheduled', {
      task_type: 'echo',
      queue_name: 'alpha',
      run_at: new Date(clock.now().getTime() + 60_000).toISOString(),
    });
    const [done, running] = (await factoryClaim(owner, 'alpha', clock.now(), 2)) as [JobItem, JobItem];
    clock.advance(2000);
    await completeHeld(owner.orgId, done, { ok: true }, clock.now());
    await submit('beta', { max_attempts: 1 });
    await submit('beta', { max_attempts: 3 });
    const [dying, retrying] = (await factoryClaim(owner, 'beta', clock.now(), 2)) as [JobItem, JobItem];
    await failHeld(owner.orgId, dying, { error: 'broken' }, clock.now());
    await failHeld(owner.orgId, retrying, { error: 'try later' }, clock.now());
    clock.advance(5000);
    return { clock, handler, owner, first, running };
  }

  it('counts each queue’s jobs by status, with the longest wait and the totals', async () => {
    // Prepare
    const { handler, owner } = await prepareQueues();

    // Act
    const stats = await call(handler, 'GET', '/job-queue/stats', { token: owner.token });

    // Assess
    expect(stats.status).toBe(200);
    const zero = { scheduled: 0, queued: 0, retrying: 0, running: 0, completed: 0, dead: 0 };
    expect(stats.body.data.queues).toEqual([
      {
        queue_name: 'alpha',
        counts: { ...zero, scheduled: 1, queued: 2, running: 1, completed: 1 },
        pending: 4,
        oldest_waiting_at: expect.any(String),
        oldest_waiting_seconds: 8,
        totals: { submitted: 5, completed: 1, dead: 0, failed_attempts: 0 },
        average_run_ms: 2000,
      },
      {
        queue_name: 'beta',
        counts: { ...zero, retrying: 1, dead: 1 },
        pending: 1,
        oldest_waiting_at: null,
        oldest_waiting_seconds: null,
        totals: { submitted: 2, completed: 0, dead: 1, failed_attempts: 2 },
        average_run_ms: null,
      },
    ]);
    expect(stats.body.data).toMatchObject({
      counts: { ...zero, scheduled: 1, queued: 2, running: 1, completed: 1, retrying: 1, dead: 1 },
      pending: 5,
      oldest_waiting_seconds: 8,
    });
  });

  it('lists a queue’s jobs running first, then waiting, then finished, paged, and by status', async () => {
    // Prepare
    const { handler, owner, running } = await prepareQueues();
    const list = (query: Record<string, string>) =>
      call(handler, 'GET', '/job-queue/alpha/jobs', { token: owner.token, query });

    // Act
    const all = await list({});
    const paged = await list({ limit: '2', offset: '1' });
    const waiting = await list({ status: 'queued,scheduled' });
    const unknown = await call(handler, 'GET', '/job-queue/nowhere/jobs', { token: owner.token });
    const badStatus = await list({ status: 'lost' });

    // Assess
    expect(all.body.meta).toEqual({ total: 5, limit: 50, offset: 0 });
    expect(all.body.data.map((job: { status: string }) => job.status)).toEqual([
      'running',
      'queued',
      'queued',
      'scheduled',
      'completed',
    ]);
    expect(all.body.data[0].id).toBe(running.id);
    expect(paged.body.meta).toEqual({ total: 5, limit: 2, offset: 1 });
    expect(paged.body.data).toEqual(all.body.data.slice(1, 3));
    expect(waiting.body.meta.total).toBe(3);
    expect(waiting.body.data.map((job: { status: string }) => job.status)).toEqual(['queued', 'queued', 'scheduled']);
    expect(unknown.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(badStatus.status).toBe(400);
  });

  it('shows one organization nothing of another’s queues', async () => {
    // Prepare
    await prepareQueues();
    const stranger = await newUser('stranger');
    const handler = jobQueueHandler();

    // Act
    const stats = await call(handler, 'GET', '/job-queue/stats', { token: stranger.token });
    const jobs = await call(handler, 'GET', '/job-queue/alpha/jobs', { token: stranger.token });

    // Assess
    expect(stats.body.data).toMatchObject({ queues: [], pending: 0 });
    expect(jobs.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
  });
});
