import type { Page } from '#lib/db/paging';
import { NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import { type QueueCounts, queueCounts } from '#lib/jobs/job-counts';
import {
  firstKeptDay,
  isExpired,
  JOB_STATUSES,
  type JobItem,
  type JobRecord,
  type JobStatus,
  type Lane,
  toJobRecord,
} from '#lib/jobs/job-keys';
import { getJobItem, jobsByStatus, nextWaiting, type QueueRef } from '#lib/jobs/job-records';
import { queueCall } from '#lib/jobs/jobs';
import type { RequestContext } from '#lib/kernel/context';

/** Reading jobs: GET /task-queue/{id}, GET /job-queue/{queue}/jobs and GET /job-queue/stats. */

export async function getJob(ctx: RequestContext, id: string): Promise<JobRecord> {
  const orgId = requirePrincipal(ctx).orgId;
  const job = await queueCall(() => getJobItem(orgId, id));
  if (!job || isExpired(job, ctx.ports.clock.now())) throw new NotFoundError('No job with this id');
  return toJobRecord(job);
}

/** A list without a status filter: what is running first, then what waits, then what finished. */
const LIST_ORDER: readonly JobStatus[] = ['running', 'queued', 'retrying', 'scheduled', 'dead', 'completed'];

const isFinished = (status: JobStatus) => status === 'completed' || status === 'dead';

/**
 * A page of a queue's jobs, of the statuses asked for (all when none), in LIST_ORDER: each status's
 * range of gsi2 in turn, the counts telling which ranges the offset skips whole, so a page costs its
 * offset and size, never the queue. Finished jobs are those still kept (RETENTION_DAYS).
 */
export async function listJobs(
  ctx: RequestContext,
  lane: Lane,
  queue: string,
  options: { statuses?: JobStatus[]; limit: number; offset: number },
): Promise<Page<JobRecord>> {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  const ref: QueueRef = { orgId, lane, queue };
  return queueCall(async () => {
    const [counts] = await queueCounts({ orgId, lane, queue, now });
    const statuses = LIST_ORDER.filter((status) => !options.statuses || options.statuses.includes(status));
    const countOf = (status: JobStatus) => Math.max(0, counts?.counts[status] ?? 0);
    const total = statuses.reduce((sum, status) => sum + countOf(status), 0);
    const items: JobItem[] = [];
    let skip = options.offset;
    for (const status of statuses) {
      if (items.length >= options.limit) break;
      if (skip >= countOf(status)) {
        skip -= countOf(status);
        continue;
      }
      const page = await jobsByStatus(ref, status, {
        limit: options.limit - items.length,
        offset: skip,
        ...(isFinished(status) ? { since: firstKeptDay(now) } : {}),
      });
      items.push(...page);
      skip = 0;
    }
    return { items: items.map(toJobRecord), total };
  });
}

export interface QueueStats {
  queue_name: string;
  counts: Record<JobStatus, number>;
  /** Jobs not yet finished. */
  pending: number;
  /** The time the longest-waiting claimable job has been claimable since; null when none waits. */
  oldest_waiting_at: string | null;
  oldest_waiting_seconds: number | null;
  totals: { submitted: number; completed: number; dead: number; failed_attempts: number };
  /** Mean run time of the completed jobs, claim to completion; null before the first. */
  average_run_ms: number | null;
}

/**
 * The longest-waiting claimable job of a queue: the oldest queued one (gsi2 `queued`, by available time)
 * or a scheduled or retrying one whose time has come and that no claim has made queued yet.
 */
async function oldestWaiting(ref: QueueRef, counts: QueueCounts, now: Date): Promise<string | null> {
  const [queued, waiting] = await Promise.all([
    counts.counts.queued > 0 ? jobsByStatus(ref, 'queued', { limit: 1, offset: 0 }) : [],
    counts.counts.scheduled + counts.counts.retrying > 0 ? nextWaiting(ref) : undefined,
  ]);
  const times = [
    queued[0]?.available_at,
    waiting && waiting.available_at <= now.toISOString() ? waiting.available_at : undefined,
  ];
  const known = times.filter((time): time is string => time !== undefined).sort();
  return known[0] ?? null;
}

export function toQueueStats(counts: QueueCounts, oldest: string | null, now: Date): QueueStats {
  const { totals } = counts;
  const pending = counts.counts.scheduled + counts.counts.queued + counts.counts.retrying + counts.counts.running;
  return {
    queue_name: counts.queue,
    counts: Object.fromEntries(JOB_STATUSES.map((status) => [status, Math.max(0, counts.counts[status])])) as Record<
      JobStatus,
      number
    >,
    pending: Math.max(0, pending),
    oldest_waiting_at: oldest,
    oldest_waiting_seconds: oldest ? Math.max(0, Math.floor((now.getTime() - Date.parse(oldest)) / 1000)) : null,
    totals: {
      submitted: totals.submitted,
      completed: totals.completed_total,
      dead: totals.dead_total,
      failed_attempts: totals.failed_attempts,
    },
    average_run_ms: totals.completed_total > 0 ? Math.round(totals.run_ms / totals.completed_total) : null,
  };
}

/** Every queue of a lane of the organization with its counts and its longest wait. */
export async function laneStats(orgId: string, lane: Lane, now: Date): Promise<QueueStats[]> {
  const all = await queueCounts({ orgId, lane, now });
  return Promise.all(
    all.map(async (counts) =>
      toQueueStats(counts, await oldestWaiting({ orgId, lane, queue: counts.queue }, counts, now), now),
    ),
  );
}

/** GET /job-queue/stats: per queue, and summed. */
export async function jobQueueStats(ctx: RequestContext, lane: Lane) {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  const queues = await queueCall(() => laneStats(orgId, lane, now));
  const counts = Object.fromEntries(
    JOB_STATUSES.map((status) => [status, queues.reduce((sum, queue) => sum + queue.counts[status], 0)]),
  ) as Record<JobStatus, number>;
  const oldest = queues
    .map((queue) => queue.oldest_waiting_at)
    .filter((at): at is string => at !== null)
    .sort()[0];
  return {
    queues,
    counts,
    pending: queues.reduce((sum, queue) => sum + queue.pending, 0),
    oldest_waiting_at: oldest ?? null,
    oldest_waiting_seconds: oldest ? Math.max(0, Math.floor((now.getTime() - Date.parse(oldest)) / 1000)) : null,
  };
}
