import { poolRecords, readConfig } from '#lib/factory/factory-config';
import {
  BACKLOG_ALERT_SECONDS,
  DEAD_WINDOW_HOURS,
  type FactoryConfig,
  MISSED_HEARTBEATS,
  type PoolItem,
} from '#lib/factory/factory-keys';
import { requirePrincipal } from '#lib/identity/access';
import { JOB_STATUSES, type JobItem, type JobStatus } from '#lib/jobs/job-keys';
import { laneStats, type QueueStats } from '#lib/jobs/job-queries';
import { deadSince, expiredLeases, type QueueRef, runningJobs } from '#lib/jobs/job-records';
import { queueCall } from '#lib/jobs/jobs';
import type { RequestContext } from '#lib/kernel/context';

/**
 * What the factory does for an organization: its workers and the jobs they hold (GET /factory-workers),
 * its numbers (GET /factory-workers/stats) and what needs attention (GET /factory-workers/health-summary).
 * The workers are those of the organization's running pools, as each last recorded itself; the jobs they
 * hold are read live from the lease index of each job-queue queue with running jobs.
 */

/** Running jobs read per queue. */
const MAX_HELD = 500;

export interface HeldJob {
  id: string;
  queue_name: string;
  task_type: string;
  attempts: number;
  started_at: string | null;
  lease_expires_at: string | null;
}

const held = (job: JobItem): HeldJob => ({
  id: job.id,
  queue_name: job.queue,
  task_type: job.type,
  attempts: job.attempts,
  started_at: job.started_at ?? null,
  lease_expires_at: job.lease_expires_at ?? null,
});

const isLive = (pool: PoolItem, now: Date) =>
  now.getTime() - Date.parse(pool.heartbeat_at) <= (pool.heartbeat_ms ?? 10_000) * MISSED_HEARTBEATS;

interface Snapshot {
  config: FactoryConfig;
  pools: PoolItem[];
  queues: QueueStats[];
  running: JobItem[];
}

async function snapshot(orgId: string, now: Date): Promise<Snapshot> {
  const [config, pools, queues] = await Promise.all([
    readConfig(orgId),
    poolRecords(orgId),
    laneStats(orgId, 'job', now),
  ]);
  const running = await Promise.all(
    queues
      .filter((queue) => queue.counts.running > 0)
      .map(async (queue) => (await runningJobs({ orgId, lane: 'job', queue: queue.queue_name }, MAX_HELD)).items),
  );
  return { config, pools: pools.filter((pool) => isLive(pool, now)), queues, running: running.flat() };
}

function workersOf({ pools, running }: Snapshot) {
  const byWorker = new Map<string, JobItem[]>();
  for (const job of running)
    byWorker.set(String(job.claimed_by), [...(byWorker.get(String(job.claimed_by)) ?? []), job]);
  const workers = pools.flatMap((pool) =>
    pool.workers.map((worker) => {
      const jobs = byWorker.get(worker.id) ?? [];
      byWorker.delete(worker.id);
      return {
        id: worker.id,
        runtime_id: pool.runtime_id,
        state: jobs.length > 0 ? ('busy' as const) : ('idle' as const),
        jobs: jobs.map(held),
        completed: worker.completed,
        failed: worker.failed,
      };
    }),
  );
  return { workers, unattended: [...byWorker.values()].flat().map(held) };
}

const poolView = (pool: PoolItem) => ({
  runtime_id: pool.runtime_id,
  worker_count: pool.worker_count,
  max_concurrent: pool.max_concurrent,
  started_at: pool.started_at,
  heartbeat_at: pool.heartbeat_at,
});

/** GET /factory-workers. */
export async function factoryWorkers(ctx: RequestContext) {
  const orgId = requirePrincipal(ctx).orgId;
  const state = await queueCall(() => snapshot(orgId, ctx.ports.clock.now()));
  const { workers, unattended } = workersOf(state);
  return {
    running: state.pools.length > 0,
    config: state.config,
    pools: state.pools.map(poolView),
    workers,
    unattended_jobs: unattended,
  };
}

const sumCounts = (queues: QueueStats[]) =>
  Object.fromEntries(
    JOB_STATUSES.map((status) => [status, queues.reduce((sum, queue) => sum + queue.counts[status], 0)]),
  ) as Record<JobStatus, number>;

const oldestOf = (queues: QueueStats[]) =>
  queues
    .map((queue) => queue.oldest_waiting_seconds)
    .reduce<number | null>((max, seconds) => (seconds === null ? max : Math.max(max ?? 0, seconds)), null);

/** GET /factory-workers/stats. */
export async function factoryStats(ctx: RequestContext) {
  const orgId = requirePrincipal(ctx).orgId;
  const state = await queueCall(() => snapshot(orgId, ctx.ports.clock.now()));
  const { workers } = workersOf(state);
  const busy = workers.filter((worker) => worker.state === 'busy').length;
  const completed = state.queues.reduce((sum, queue) => sum + queue.totals.completed, 0);
  const runMs = state.queues.reduce((sum, queue) => sum + (queue.average_run_ms ?? 0) * queue.totals.completed, 0);
  return {
    running: state.pools.length > 0,
    config: state.config,
    pools: state.pools.length,
    workers: workers.length,
    busy_workers: busy,
    idle_workers: workers.length - busy,
    jobs: sumCounts(state.queues),
    oldest_waiting_seconds: oldestOf(state.queues),
    totals: {
      submitted: state.queues.reduce((sum, queue) => sum + queue.totals.submitted, 0),
      completed,
      dead: state.queues.reduce((sum, queue) => sum + queue.totals.dead, 0),
      failed_attempts: state.queues.reduce((sum, queue) => sum + queue.totals.failed_attempts, 0),
    },
    average_run_ms: completed > 0 ? Math.round(runMs / completed) : null,
    since_pool_start: {
      completed: workers.reduce((sum, worker) => sum + worker.completed, 0),
      failed: workers.reduce((sum, worker) => sum + worker.failed, 0),
    },
  };
}

export interface Alert {
  code: 'stuck_jobs' | 'dead_jobs' | 'idle_pool_with_backlog';
  severity: 'warning' | 'critical';
  message: string;
  count: number;
  job_ids: string[];
}

/** GET /factory-workers/health-summary: healthy, or the alerts that say what is wrong. */
export async function factoryHealth(ctx: RequestContext) {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  return queueCall(async () => {
    const state = await snapshot(orgId, now);
    const { workers } = workersOf(state);
    const refs: QueueRef[] = state.queues.map((queue) => ({ orgId, lane: 'job', queue: queue.queue_name }));
    const since = new Date(now.getTime() - DEAD_WINDOW_HOURS * 3_600_000).toISOString();
    const [stuck, dead] = await Promise.all([
      Promise.all(
        refs.filter((_, at) => (state.queues[at]?.counts.running ?? 0) > 0).map((ref) => expiredLeases(ref, now, 50)),
      ),
      Promise.all(refs.map((ref) => deadSince(ref, since, 1000))),
    ]);
    const alerts: Alert[] = [];
    const stuckJobs = stuck.flat();
    if (stuckJobs.length > 0) {
      alerts.push({
        code: 'stuck_jobs',
        severity: 'warning',
        message:
          `${stuckJobs.length} running job(s) are past their lease: their worker stopped or is late; ` +
          'the next claim hands each to another worker, or makes it dead when its attempts are used up',
        count: stuckJobs.length,
        job_ids: stuckJobs.slice(0, 10).map((job) => job.id),
      });
    }
    const deadCount = dead.reduce((sum, counted) => sum + counted.count, 0);
    if (deadCount > 0) {
      alerts.push({
        code: 'dead_jobs',
        severity: 'warning',
        message:
          `${deadCount} job(s) went dead in the last ${DEAD_WINDOW_HOURS} hours ` +
          '(GET /job-queue/{queue}/jobs?status=dead)',
        count: deadCount,
        job_ids: [],
      });
    }
    const waiting = state.queues.reduce((sum, queue) => sum + queue.counts.queued, 0);
    const oldest = oldestOf(state.queues);
    const busy = workers.filter((worker) => worker.state === 'busy').length;
    if (oldest !== null && oldest >= BACKLOG_ALERT_SECONDS && busy === 0) {
      alerts.push({
        code: 'idle_pool_with_backlog',
        severity: 'critical',
        message:
          `${state.pools.length === 0 ? 'No factory pool is running' : 'Every factory worker is idle'} while jobs ` +
          `wait to be claimed, the longest for ${oldest} s`,
        count: Math.max(waiting, 1),
        job_ids: [],
      });
    }
    const status = alerts.some((alert) => alert.severity === 'critical')
      ? 'critical'
      : alerts.length > 0
        ? 'warning'
        : 'healthy';
    return {
      status,
      checked_at: now.toISOString(),
      alerts,
      pool: { running: state.pools.length > 0, workers: workers.length, busy_workers: busy },
      backlog: {
        pending: state.queues.reduce((sum, queue) => sum + queue.pending, 0),
        queued: waiting,
        oldest_waiting_seconds: oldest,
      },
    };
  });
}
