import { randomBase62 } from '#lib/crypto/secrets';
import { readConfig, removePool, writePool } from '#lib/factory/factory-config';
import { type FactoryConfig, factoryKeys, MISSED_HEARTBEATS } from '#lib/factory/factory-keys';
import { type JobHandlers, PermanentJobError } from '#lib/factory/handler-types';
import { defaultHandlers, unknownType } from '#lib/factory/job-handlers';
import { claimFromQueue } from '#lib/jobs/job-claim';
import { type FactoryQueue, factoryQueues } from '#lib/jobs/job-counts';
import { completeHeld, failHeld } from '#lib/jobs/job-finish';
import { type JobItem, MAX_RESULT_BYTES, toJobRecord } from '#lib/jobs/job-keys';
import { expiredLeases, nextWaiting } from '#lib/jobs/job-records';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';

/**
 * The factory: the workers that run the job queue's jobs. One runtime per process (the local runtime
 * starts one for `npm start`; in AWS a scheduled function runs one for most of each minute) keeps a
 * pool per organization with work. Every `pollMs` it reads the live counts of every job-lane queue
 * (one Query of gsi1 `JQ#FACTORY`), starts a pool for an organization whose queues have claimable work,
 * and wakes it; a pool idle for `idleStopMs` stops. A pool has the organization's `worker_count`
 * workers, which claim (lib/jobs/job-claim.ts) and run jobs by type, never more than `max_concurrent`
 * at once between them. Every heartbeat a pool records itself (GET /factory-workers) and rereads the
 * setting: more workers start at once, fewer stop after their current jobs.
 */

export interface FactoryOptions {
  handlers?: JobHandlers;
  /** Between looks for work. */
  pollMs?: number;
  /** Between a pool's records of itself (and rereads of its setting). */
  heartbeatMs?: number;
  /** A pool with nothing to do for this long stops. */
  idleStopMs?: number;
  runtimeId?: string;
}

export interface FactoryRuntime {
  readonly runtimeId: string;
  /** Looks for work now rather than at the next poll. */
  wake(): void;
  /** Jobs completed and failed since the start, all pools together. */
  counts(): { completed: number; failed: number };
  /** Stops claiming, lets the jobs in hand finish, and removes the pools' records. */
  stop(): Promise<void>;
}

interface WorkerState {
  id: string;
  holding: Map<string, JobItem>;
  completed: number;
  failed: number;
}

/** A promise with its resolver, for waits that another part of the pool ends. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

class Pool {
  readonly queues = new Set<string>();
  readonly workers = new Map<number, { state: WorkerState; done: Promise<void> }>();
  readonly startedAt: Date;
  inFlight = 0;
  completed = 0;
  failed = 0;
  stopping = false;
  lastWorkAt = Date.now();
  heartbeatAt = 0;
  #waiting = signal();
  #turn = 0;

  constructor(
    readonly runtime: Runtime,
    readonly orgId: string,
    public config: FactoryConfig,
  ) {
    this.startedAt = runtime.ctx.ports.clock.now();
  }

  /** Queues found with work: the workers take them in turn until a claim finds one empty. */
  offer(queues: string[]): void {
    for (const queue of queues) this.queues.add(queue);
    this.wakeWorkers();
  }

  wakeWorkers(): void {
    const waiting = this.#waiting;
    this.#waiting = signal();
    waiting.resolve();
  }

  /** Until there is work, a slot, or a stop (the poll wakes the pool at the latest). */
  idle(): Promise<void> {
    return this.#waiting.promise;
  }

  nextQueue(): string | undefined {
    const queues = [...this.queues];
    if (queues.length === 0) return undefined;
    this.#turn = (this.#turn + 1) % queues.length;
    return queues[this.#turn];
  }

  /** Workers up to the setting's count; those above it leave after their current jobs. */
  staff(): void {
    for (let index = 0; index < this.config.worker_count; index += 1) {
      if (this.workers.has(index)) continue;
      const state: WorkerState = {
        id: `${this.runtime.runtimeId}-w${index + 1}`,
        holding: new Map(),
        completed: 0,
        failed: 0,
      };
      const done = this.work(index, state)
        .catch((error: unknown) =>
          logger.error('factory worker stopped', { worker_id: state.id, error: error as Error }),
        )
        .finally(() => this.workers.delete(index));
      this.workers.set(index, { state, done });
    }
  }

  async work(index: number, state: WorkerState): Promise<void> {
    const { clock } = this.runtime.ctx.ports;
    while (!this.stopping && index < this.config.worker_count) {
      const queue = this.nextQueue();
      const free = this.config.max_concurrent - this.inFlight;
      if (!queue || free <= 0) {
        await this.idle();
        continue;
      }
      const batch = Math.min(free, Math.ceil(this.config.max_concurrent / this.config.worker_count));
      this.inFlight += batch;
      let jobs: JobItem[] = [];
      try {
        jobs = await claimFromQueue(
          { orgId: this.orgId, lane: 'job', queue },
          { workerId: state.id, batchSize: batch },
          clock.now(),
        );
      } catch (error) {
        logger.error('factory claim failed', { org_id: this.orgId, queue, error: error as Error });
        this.queues.delete(queue);
      } finally {
        this.inFlight -= batch - jobs.length;
      }
      if (jobs.length === 0) {
        this.queues.delete(queue);
        continue;
      }
      this.lastWorkAt = Date.now();
      await Promise.all(jobs.map((job) => this.run(state, job)));
      this.lastWorkAt = Date.now();
    }
  }

  /** Runs one held job to its end: completed, or failed (retried or dead), within its timeout. */
  async run(state: WorkerState, job: JobItem): Promise<void> {
    const { clock } = this.runtime.ctx.ports;
    const handlers = this.runtime.handlers;
    state.holding.set(job.id, job);
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error(`The job did not finish within its ${job.timeout_seconds} s`)),
      job.timeout_seconds * 1000,
    );
    try {
      let outcome: { result: Record<string, unknown> } | { error: string; permanent: boolean };
      try {
        const handler = handlers[job.type];
        if (!handler) throw unknownType(job.type, handlers);
        const aborted = new Promise<never>((_, reject) =>
          controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }),
        );
        const result = await Promise.race([
          handler(toJobRecord(job), { signal: controller.signal, now: () => clock.now() }),
          aborted,
        ]);
        outcome = resultOf(result);
      } catch (error) {
        outcome = {
          error: error instanceof Error ? error.message : String(error),
          permanent: error instanceof PermanentJobError,
        };
      }
      if ('result' in outcome) {
        await completeHeld(this.orgId, job, outcome.result, clock.now());
        state.completed += 1;
        this.completed += 1;
      } else {
        await failHeld(this.orgId, job, outcome, clock.now());
        state.failed += 1;
        this.failed += 1;
      }
    } catch (error) {
      // Most often the lease ran out and another worker holds the job now: its result is the one kept.
      logger.warn('factory could not record a job’s end', {
        org_id: this.orgId,
        job_id: job.id,
        error: error as Error,
      });
    } finally {
      clearTimeout(timer);
      state.holding.delete(job.id);
      this.inFlight -= 1;
      this.wakeWorkers();
    }
  }

  /** Records the pool (its workers, what they hold) and applies the organization's current setting. */
  async heartbeat(): Promise<void> {
    this.heartbeatAt = Date.now();
    this.config = await readConfig(this.orgId);
    this.staff();
    this.wakeWorkers();
    const now = this.runtime.ctx.ports.clock.now();
    const ttlSeconds = Math.ceil((this.runtime.heartbeatMs * MISSED_HEARTBEATS) / 1000) + 3600;
    await writePool({
      pk: factoryKeys.pk(this.orgId),
      sk: factoryKeys.pool(this.runtime.runtimeId),
      runtime_id: this.runtime.runtimeId,
      worker_count: this.config.worker_count,
      max_concurrent: this.config.max_concurrent,
      workers: [...this.workers.values()].map(({ state }) => ({
        id: state.id,
        holding: state.holding.size,
        completed: state.completed,
        failed: state.failed,
      })),
      started_at: this.startedAt.toISOString(),
      heartbeat_at: now.toISOString(),
      heartbeat_ms: this.runtime.heartbeatMs,
      expires_at: Math.floor(now.getTime() / 1000) + ttlSeconds,
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeWorkers();
    await Promise.all([...this.workers.values()].map((worker) => worker.done));
    await removePool(this.orgId, this.runtime.runtimeId);
  }

  counts() {
    return { completed: this.completed, failed: this.failed };
  }
}

/** A handler's answer as a job result: an object that fits the job's item, else a failure for good. */
function resultOf(value: unknown): { result: Record<string, unknown> } | { error: string; permanent: boolean } {
  const result = value ?? {};
  if (typeof result !== 'object' || Array.isArray(result)) {
    return { error: 'The job’s handler answered something other than an object', permanent: true };
  }
  if (Buffer.byteLength(JSON.stringify(result)) > MAX_RESULT_BYTES) {
    return { error: `The job’s result is larger than ${MAX_RESULT_BYTES} bytes`, permanent: true };
  }
  return { result: result as Record<string, unknown> };
}

/** Whether a queue has a job to claim now: queued, a wait that is due, or a lease that ran out. */
async function hasWork(queue: FactoryQueue, now: Date): Promise<boolean> {
  const { live } = queue;
  const ref = { orgId: queue.orgId, lane: 'job' as const, queue: queue.queue };
  if (live.queued > 0) return true;
  if (live.scheduled + live.retrying > 0) {
    const next = await nextWaiting(ref);
    if (next && next.available_at <= now.toISOString()) return true;
  }
  return live.running > 0 && (await expiredLeases(ref, now, 1)).length > 0;
}

class Runtime implements FactoryRuntime {
  readonly runtimeId: string;
  readonly handlers: JobHandlers;
  readonly pollMs: number;
  readonly heartbeatMs: number;
  readonly idleStopMs: number;
  readonly pools = new Map<string, Pool>();
  #stopped = false;
  #wake = signal();
  #finished = { completed: 0, failed: 0 };
  readonly loop: Promise<void>;

  constructor(
    readonly ctx: RequestContext,
    options: FactoryOptions,
  ) {
    this.runtimeId = options.runtimeId ?? `factory-${randomBase62(8)}`;
    this.handlers = options.handlers ?? defaultHandlers;
    this.pollMs = options.pollMs ?? 1000;
    this.heartbeatMs = options.heartbeatMs ?? 10_000;
    this.idleStopMs = options.idleStopMs ?? 60_000;
    this.loop = this.run();
  }

  wake(): void {
    const waking = this.#wake;
    this.#wake = signal();
    waking.resolve();
  }

  counts() {
    const running = [...this.pools.values()].map((pool) => pool.counts());
    return {
      completed: this.#finished.completed + running.reduce((sum, counts) => sum + counts.completed, 0),
      failed: this.#finished.failed + running.reduce((sum, counts) => sum + counts.failed, 0),
    };
  }

  async run(): Promise<void> {
    while (!this.#stopped) {
      try {
        await this.tick();
      } catch (error) {
        logger.error('factory poll failed', { runtime_id: this.runtimeId, error: error as Error });
      }
      const timer = setTimeout(() => this.wake(), this.pollMs);
      await this.#wake.promise;
      clearTimeout(timer);
    }
  }

  async tick(): Promise<void> {
    const now = this.ctx.ports.clock.now();
    const queues = await factoryQueues();
    const work = new Map<string, string[]>();
    const found = await Promise.all(queues.map(async (queue) => ((await hasWork(queue, now)) ? queue : undefined)));
    for (const queue of found) {
      if (queue) work.set(queue.orgId, [...(work.get(queue.orgId) ?? []), queue.queue]);
    }
    for (const [orgId, names] of work) {
      if (this.#stopped) return;
      let pool = this.pools.get(orgId);
      if (!pool) {
        pool = new Pool(this, orgId, await readConfig(orgId));
        this.pools.set(orgId, pool);
        pool.staff();
      }
      pool.offer(names);
    }
    for (const [orgId, pool] of this.pools) {
      const idle = !work.has(orgId) && pool.inFlight === 0 && Date.now() - pool.lastWorkAt >= this.idleStopMs;
      if (idle) {
        this.pools.delete(orgId);
        await this.retire(pool);
      } else if (Date.now() - pool.heartbeatAt >= this.heartbeatMs) {
        await pool.heartbeat();
      }
    }
  }

  async retire(pool: Pool): Promise<void> {
    await pool.stop();
    const counts = pool.counts();
    this.#finished.completed += counts.completed;
    this.#finished.failed += counts.failed;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.wake();
    await this.loop;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => this.retire(pool)));
  }
}

/**
 * Starts the factory in this process with the context's ports (its clock times leases).
 *
 * @example
 * const factory = startFactory(requestContext({ ports, traceId: 'factory' }));
 * process.on('SIGTERM', () => void factory.stop());
 */
export function startFactory(ctx: RequestContext, options: FactoryOptions = {}): FactoryRuntime {
  return new Runtime(ctx, options);
}
