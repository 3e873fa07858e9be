import { beforeAll, describe, expect, it } from 'vitest';
import { taskQueueHandler } from '#functions/http/task-queue';
import { fixedClock } from '#lib/kernel/clock';
import { call, newUser, type TestUser } from '#tests/support/identity';

/**
 * The task queue (`/task-queue`) against DynamoDB Local: submit and its idempotency, claims by several
 * workers at once, leases that run out, attempts, retries, priorities, tenants and organizations. Time
 * moves by the clock port (a fixed clock the test advances), never by sleeping.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps the others ordinary.
  await newUser('instanceadmin');
});

const queue = taskQueueHandler();

/** A task-queue function whose clock the test moves, and its user's calls through it. */
function clocked(start = new Date()) {
  const clock = fixedClock(start);
  const handler = taskQueueHandler({ ports: { clock } });
  return { clock, handler };
}

type Handler = ReturnType<typeof taskQueueHandler>;

const submit = (user: TestUser, body: Record<string, unknown>, handler: Handler = queue) =>
  call(handler, 'POST', '/task-queue/submit', { token: user.token, body });

const claim = (user: TestUser, body: Record<string, unknown>, handler: Handler = queue) =>
  call(handler, 'POST', '/task-queue/claim', { token: user.token, body });

const finish = (
  user: TestUser,
  id: string,
  action: 'complete' | 'fail' | 'heartbeat',
  body: Record<string, unknown>,
  handler: Handler = queue,
) => call(handler, 'POST', `/task-queue/${id}/${action}`, { token: user.token, body });

const getJob = (user: TestUser, id: string, handler: Handler = queue) =>
  call(handler, 'GET', `/task-queue/${id}`, { token: user.token });

const JOB_ID = /^job_[0-9A-Za-z]{16}$/;

describe('POST /task-queue/submit', () => {
  it('queues a job with the defaults for every field not given (201), and GET answers it', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await submit(owner, { task_type: 'resize', payload: { width: 64 } });
    const fetched = await getJob(owner, response.body.data?.id);

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(JOB_ID),
        queue_name: 'default',
        task_type: 'resize',
        status: 'queued',
        payload: { width: 64 },
        priority: 0,
        tenant_id: null,
        attempts: 0,
        max_attempts: 3,
        timeout_seconds: 300,
        idempotency_key: null,
        run_at: null,
        available_at: response.body.data.created_at,
        claimed_by: null,
        lease_expires_at: null,
        result: null,
        last_error: null,
        created_at: expect.any(String),
        updated_at: response.body.data.created_at,
        started_at: null,
        finished_at: null,
      },
    });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(response.body);
  });

  it('answers 400 naming task_type when it is missing, and for values out of range', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const missing = await submit(owner, { payload: {} });
    const outOfRange = await submit(owner, { task_type: 'x', priority: 5000, max_attempts: 0, queue_name: 'a#b' });

    // Assess
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('VALIDATION_ERROR');
    expect(missing.body.error.details.map((detail: { path: string }) => detail.path)).toEqual(['body.task_type']);
    expect(outOfRange.status).toBe(400);
    expect(outOfRange.body.error.details.map((detail: { path: string }) => detail.path).sort()).toEqual([
      'body.max_attempts',
      'body.priority',
      'body.queue_name',
    ]);
  });

  it('answers a repeated idempotency key with the first job and 200', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await submit(owner, { task_type: 'email', idempotency_key: 'order-1', payload: { n: 1 } });

    // Act
    const repeat = await submit(owner, { task_type: 'email', idempotency_key: 'order-1', payload: { n: 2 } });
    const other = await submit(owner, { task_type: 'email', idempotency_key: 'order-2' });

    // Assess
    expect(first.status).toBe(201);
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(first.body);
    expect(other.status).toBe(201);
    expect(other.body.data.id).not.toBe(first.body.data.id);
  });

  it('queues one job for ten concurrent submits of the same key, and answers it to all ten', async () => {
    // Prepare
    const owner = await newUser('owner');
    const body = { task_type: 'charge', idempotency_key: 'race-7', queue_name: 'billing' };

    // Act
    const responses = await Promise.all(Array.from({ length: 10 }, () => submit(owner, body)));
    const claimed = await claim(owner, { worker_id: 'w1', queue_name: 'billing', batch_size: 100 });

    // Assess
    expect(responses.map((response) => response.status).sort()).toEqual(
      [201, 200, 200, 200, 200, 200, 200, 200, 200, 200].sort(),
    );
    expect(new Set(responses.map((response) => response.body.data.id)).size).toBe(1);
    expect(claimed.body.data).toHaveLength(1);
    expect(claimed.body.data[0].id).toBe(responses[0]?.body.data.id);
  });
});

describe('POST /task-queue/claim', () => {
  it('hands each of 200 jobs to exactly one of 8 workers claiming at once, and each completes once', async () => {
    // Prepare
    const owner = await newUser('owner');
    const submitted = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        submit(owner, { task_type: 'crunch', queue_name: 'swarm', payload: { index } }),
      ),
    );
    const ids = submitted.map((response) => response.body.data.id as string);
    const claims = new Map<string, string[]>();
    const completions: number[] = [];

    // Act
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        const workerId = `worker-${worker}`;
        for (;;) {
          const claimed = await claim(owner, {
            worker_id: workerId,
            queue_name: 'swarm',
            batch_size: 1 + (worker % 3),
          });
          expect(claimed.status).toBe(200);
          if (claimed.body.data === null) return;
          for (const job of claimed.body.data) {
            claims.set(job.id, [...(claims.get(job.id) ?? []), workerId]);
            const done = await finish(owner, job.id, 'complete', {
              worker_id: workerId,
              lease_token: job.lease_token,
              result: { by: workerId },
            });
            completions.push(done.status);
          }
        }
      }),
    );
    const finished = await Promise.all(ids.map((id) => getJob(owner, id)));

    // Assess
    expect(submitted.every((response) => response.status === 201)).toBe(true);
    expect([...claims.keys()].sort()).toEqual([...ids].sort());
    expect([...claims.values()].filter((holders) => holders.length !== 1)).toEqual([]);
    expect(completions).toHaveLength(200);
    expect(completions.every((status) => status === 200)).toBe(true);
    for (const job of finished.map((response) => response.body.data)) {
      expect(job).toMatchObject({ status: 'completed', attempts: 1, result: { by: claims.get(job.id)?.[0] } });
    }
    expect((await claim(owner, { worker_id: 'late', queue_name: 'swarm' })).body).toEqual({ data: null });
  });

  it('answers data: null when the queue has nothing to claim, and 400 without worker_id', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const empty = await claim(owner, { worker_id: 'w1', queue_name: 'nothing-here' });
    const anonymousWorker = await claim(owner, { queue_name: 'nothing-here' });

    // Assess
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ data: null });
    expect(anonymousWorker.status).toBe(400);
    expect(anonymousWorker.body.error.details.map((detail: { path: string }) => detail.path)).toEqual([
      'body.worker_id',
    ]);
  });

  it('claims the highest priority first, and jobs of one priority oldest first', async () => {
    // Prepare
    const { clock, handler } = clocked();
    const owner = await newUser('owner');
    const order: string[] = [];
    for (const [name, priority] of [
      ['low', -5],
      ['normal', 0],
      ['urgent-first', 10],
      ['high', 3],
      ['urgent-second', 10],
    ] as const) {
      await submit(owner, { task_type: name, priority, queue_name: 'ranked' }, handler);
      clock.advance(1000);
    }

    // Act
    for (let index = 0; index < 5; index += 1) {
      const claimed = await claim(owner, { worker_id: 'solo', queue_name: 'ranked' }, handler);
      order.push(claimed.body.data[0].task_type);
    }

    // Assess
    expect(order).toEqual(['urgent-first', 'urgent-second', 'high', 'normal', 'low']);
  });

  it('claims only the tenant and the task type asked for', async () => {
    // Prepare
    const owner = await newUser('owner');
    await submit(owner, { task_type: 'render', tenant_id: 1, queue_name: 'tenants' });
    await submit(owner, { task_type: 'render', tenant_id: 2, queue_name: 'tenants' });
    await submit(owner, { task_type: 'encode', tenant_id: 2, queue_name: 'tenants' });

    // Act
    const tenantTwo = await claim(owner, { worker_id: 'w', queue_name: 'tenants', tenant_id: 2, batch_size: 10 });
    const renderOfOne = await claim(owner, {
      worker_id: 'w',
      queue_name: 'tenants',
      tenant_id: 1,
      task_type: 'encode',
    });
    const rest = await claim(owner, { worker_id: 'w', queue_name: 'tenants', batch_size: 10 });

    // Assess
    expect(
      tenantTwo.body.data.map((job: { tenant_id: number; task_type: string }) => [job.tenant_id, job.task_type]).sort(),
    ).toEqual([
      [2, 'encode'],
      [2, 'render'],
    ]);
    expect(renderOfOne.body).toEqual({ data: null });
    expect(rest.body.data.map((job: { tenant_id: number }) => job.tenant_id)).toEqual([1]);
  });

  it('keeps organizations apart: another organization can neither see, claim nor complete a job', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const job = (await submit(owner, { task_type: 'secret', queue_name: 'private' })).body.data;

    // Act
    const seen = await getJob(stranger, job.id);
    const claimedByStranger = await claim(stranger, { worker_id: 'thief', queue_name: 'private', batch_size: 10 });
    const held = (await claim(owner, { worker_id: 'w', queue_name: 'private' })).body.data[0];
    const completedByStranger = await finish(stranger, job.id, 'complete', {
      worker_id: 'w',
      lease_token: held.lease_token,
    });
    const after = await getJob(owner, job.id);

    // Assess
    expect(seen.status).toBe(404);
    expect(claimedByStranger.body).toEqual({ data: null });
    expect(completedByStranger.status).toBe(404);
    expect(after.body.data).toMatchObject({ status: 'running', claimed_by: 'w' });
  });
});

describe('leases, attempts and retries', () => {
  it('hands a job whose lease expired to the next claim, and refuses the old holder with 409', async () => {
    // Prepare
    const { clock, handler } = clocked();
    const owner = await newUser('owner');
    const job = (await submit(owner, { task_type: 'slow', queue_name: 'leases', timeout_seconds: 30 }, handler)).body
      .data;
    const first = (await claim(owner, { worker_id: 'first', queue_name: 'leases' }, handler)).body.data[0];
    clock.advance(29_000);
    const tooEarly = await claim(owner, { worker_id: 'second', queue_name: 'leases' }, handler);
    clock.advance(2_000);

    // Act
    const second = (await claim(owner, { worker_id: 'second', queue_name: 'leases' }, handler)).body.data[0];
    const staleComplete = await finish(
      owner,
      job.id,
      'complete',
      { worker_id: 'first', lease_token: first.lease_token, result: { stale: true } },
      handler,
    );
    const staleHeartbeat = await finish(
      owner,
      job.id,
      'heartbeat',
      { worker_id: 'first', lease_token: first.lease_token },
      handler,
    );
    const staleFail = await finish(
      owner,
      job.id,
      'fail',
      { worker_id: 'first', lease_token: first.lease_token, error: 'x' },
      handler,
    );
    const wrongWorker = await finish(
      owner,
      job.id,
      'complete',
      { worker_id: 'first', lease_token: second.lease_token },
      handler,
    );
    const current = await finish(
      owner,
      job.id,
      'complete',
      { worker_id: 'second', lease_token: second.lease_token, result: { fresh: true } },
      handler,
    );

    // Assess
    expect(tooEarly.body).toEqual({ data: null });
    expect(second).toMatchObject({ id: job.id, attempts: 2, claimed_by: 'second' });
    expect(second.last_error).toMatch(/lease of attempt 1 \(worker first\) expired/);
    expect(second.lease_token).not.toBe(first.lease_token);
    for (const refused of [staleComplete, staleHeartbeat, staleFail, wrongWorker]) {
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('CONFLICT');
      expect(refused.body.error.details).toEqual([
        { path: 'body.lease_token', message: 'does not hold the job’s current lease', status: 'running' },
      ]);
    }
    expect(current.status).toBe(200);
    expect(current.body.data).toMatchObject({ status: 'completed', result: { fresh: true }, attempts: 2 });
  });

  it('extends a lease on heartbeat, so that the job is not claimed again meanwhile', async () => {
    // Prepare
    const { clock, handler } = clocked();
    const owner = await newUser('owner');
    await submit(owner, { task_type: 'long', queue_name: 'beats', timeout_seconds: 30 }, handler);
    const held = (await claim(owner, { worker_id: 'w', queue_name: 'beats' }, handler)).body.data[0];
    clock.advance(25_000);

    // Act
    const beat = await finish(
      owner,
      held.id,
      'heartbeat',
      { worker_id: 'w', lease_token: held.lease_token, extend_seconds: 60 },
      handler,
    );
    clock.advance(30_000);
    const meanwhile = await claim(owner, { worker_id: 'other', queue_name: 'beats' }, handler);
    const done = await finish(owner, held.id, 'complete', { worker_id: 'w', lease_token: held.lease_token }, handler);

    // Assess
    expect(beat.status).toBe(200);
    expect(Date.parse(beat.body.data.lease_expires_at)).toBe(clock.now().getTime() - 30_000 + 60_000);
    expect(meanwhile.body).toEqual({ data: null });
    expect(done.body.data).toMatchObject({ status: 'completed', result: {} });
  });

  it('makes a job dead when the lease of its last attempt expires', async () => {
    // Prepare
    const { clock, handler } = clocked();
    const owner = await newUser('owner');
    const job = (
      await submit(owner, { task_type: 'flaky', queue_name: 'attempts', max_attempts: 2, timeout_seconds: 10 }, handler)
    ).body.data;
    await claim(owner, { worker_id: 'a', queue_name: 'attempts' }, handler);
    clock.advance(11_000);
    const second = await claim(owner, { worker_id: 'b', queue_name: 'attempts' }, handler);
    clock.advance(11_000);

    // Act
    const third = await claim(owner, { worker_id: 'c', queue_name: 'attempts' }, handler);
    const dead = await getJob(owner, job.id, handler);

    // Assess
    expect(second.body.data[0]).toMatchObject({ id: job.id, attempts: 2 });
    expect(third.body).toEqual({ data: null });
    expect(dead.body.data).toMatchObject({
      status: 'dead',
      attempts: 2,
      claimed_by: null,
      last_error: 'The lease of its last attempt (2 of 2) expired',
      finished_at: clock.now().toISOString(),
    });
  });

  it('retries a failed job after its backoff, and makes it dead when it fails its last attempt', async () => {
    // Prepare
    const { clock, handler } = clocked();
    const owner = await newUser('owner');
    const job = (await submit(owner, { task_type: 'wobbly', queue_name: 'retries', max_attempts: 2 }, handler)).body
      .data;
    const first = (await claim(owner, { worker_id: 'w', queue_name: 'retries' }, handler)).body.data[0];

    // Act
    const failed = await finish(
      owner,
      job.id,
      'fail',
      { worker_id: 'w', lease_token: first.lease_token, error: 'disk full' },
      handler,
    );
    const duringBackoff = await claim(owner, { worker_id: 'w', queue_name: 'retries' }, handler);
    clock.advance(10_000);
    const second = (await claim(owner, { worker_id: 'w', queue_name: 'retries' }, handler)).body.data[0];
    const failedAgain = await finish(
      owner,
      job.id,
      'fail',
      { worker_id: 'w', lease_token: second.lease_token, error: 'still full' },
      handler,
    );

    // Assess
    expect(failed.body.data).toMatchObject({
      status: 'retrying',
      attempts: 1,
      last_error: 'disk full',
      available_at: new Date(clock.now().getTime()).toISOString(),
    });
    expect(duringBackoff.body).toEqual({ data: null });
    expect(second).toMatchObject({ id: job.id, attempts: 2 });
    expect(failedAgain.body.data).toMatchObject({ status: 'dead', attempts: 2, last_error: 'still full' });
  });
});
