import { counterWrite, shardOf } from '#lib/db/counters';
import { prefixEnd } from '#lib/db/keys';
import { queryUpTo } from '#lib/db/paging';
import type { TransactItem } from '#lib/db/transactions';
import {
  dayOf,
  FINISHED_STATUSES,
  type FinishedStatus,
  finishedExpiry,
  firstKeptDay,
  type JobStatus,
  jobKeys,
  type Lane,
  LIVE_STATUSES,
  type LiveStatus,
  RETENTION_DAYS,
} from '#lib/jobs/job-keys';

/**
 * The queues' counts (keys: lib/jobs/job-keys.ts), kept in the transaction of every change of a job's
 * status, so that stats and list totals read a few counter items instead of the jobs. Live statuses
 * are counted as they stand; finished jobs per UTC day, so that the count of the jobs still kept (the
 * retention window) is exact although each day's jobs expire; all-time totals beside them.
 */

/** Claims and completions of one queue meet in its counts, hence shards. */
export const QUEUE_SHARDS = 4;

export const TOTALS = ['submitted', 'completed_total', 'dead_total', 'failed_attempts', 'run_ms'] as const;
export type Total = (typeof TOTALS)[number];

export interface CountChange {
  from?: JobStatus;
  to?: JobStatus;
  add?: Partial<Record<Total, number>>;
}

const isLive = (status: JobStatus | undefined): status is LiveStatus =>
  status !== undefined && (LIVE_STATUSES as readonly string[]).includes(status);
const isFinished = (status: JobStatus | undefined): status is FinishedStatus =>
  status !== undefined && (FINISHED_STATUSES as readonly string[]).includes(status);

/**
 * The counter writes of one job's change of status, for the transaction that makes it. The live counts
 * of job-lane queues are also in gsi1 under `JQ#FACTORY`, where the factory finds the queues with work.
 *
 * @example
 * await transact([jobPut, ...countWrites(orgId, 'task', 'default', now, { from: 'queued', to: 'running' })]);
 */
export function countWrites(orgId: string, lane: Lane, queue: string, now: Date, change: CountChange): TransactItem[] {
  const add: Record<string, number> = { ...change.add };
  if (change.from !== change.to) {
    if (isLive(change.from)) add[change.from] = (add[change.from] ?? 0) - 1;
    if (isLive(change.to)) add[change.to] = (add[change.to] ?? 0) + 1;
  }
  const shard = shardOf(QUEUE_SHARDS);
  const pk = jobKeys.countsPk(orgId);
  const writes: TransactItem[] = [];
  if (Object.keys(add).length > 0) {
    writes.push(
      counterWrite({
        key: { pk, sk: jobKeys.live(lane, queue, shard) },
        add,
        set: {
          org_id: orgId,
          lane,
          queue,
          ...(lane === 'job'
            ? { gsi1pk: jobKeys.factoryQueues, gsi1sk: jobKeys.factoryQueueSort(orgId, queue, shard) }
            : {}),
        },
      }),
    );
  }
  if (isFinished(change.to) && change.from !== change.to) {
    const day = dayOf(now);
    writes.push(
      counterWrite({
        key: { pk, sk: jobKeys.day(lane, queue, day, shard) },
        add: { [change.to]: 1 },
        set: { lane, queue, day, expires_at: finishedExpiry(now) },
      }),
    );
  }
  return writes;
}

export interface QueueCounts {
  queue: string;
  /** Jobs by status: live ones as they stand, finished ones still kept (the retention window). */
  counts: Record<JobStatus, number>;
  totals: Record<Total, number>;
}

const emptyCounts = (queue: string): QueueCounts => ({
  queue,
  counts: { scheduled: 0, queued: 0, retrying: 0, running: 0, completed: 0, dead: 0 },
  totals: { submitted: 0, completed_total: 0, dead_total: 0, failed_attempts: 0, run_ms: 0 },
});

/** A stats read covers this many queues of a lane at most. */
export const MAX_QUEUES = 100;

const sum = (items: Record<string, unknown>[], into: Record<string, number>): void => {
  for (const item of items) {
    for (const name of Object.keys(into)) into[name] = (into[name] ?? 0) + Number(item[name] ?? 0);
  }
};

/**
 * The counts of a lane's queues of an organization (one of them when `queue` is given): one Query of the
 * live shards, then one per queue of its day counts from the first kept day on (so expired days, removed
 * or not, are never read).
 */
export async function queueCounts(input: {
  orgId: string;
  lane: Lane;
  queue?: string;
  now: Date;
}): Promise<QueueCounts[]> {
  const pk = jobKeys.countsPk(input.orgId);
  const { items: live } = await queryUpTo<Record<string, unknown>>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': jobKeys.livePrefix(input.lane, input.queue) },
    },
    MAX_QUEUES * QUEUE_SHARDS,
  );
  const byQueue = new Map<string, Record<string, unknown>[]>();
  for (const item of live) byQueue.set(String(item.queue), [...(byQueue.get(String(item.queue)) ?? []), item]);
  const firstDay = firstKeptDay(input.now);
  const counts = await Promise.all(
    [...byQueue.entries()].map(async ([queue, shards]) => {
      const prefix = jobKeys.dayPrefix(input.lane, queue);
      const { items: days } = await queryUpTo<Record<string, unknown>>(
        {
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :end',
          ExpressionAttributeValues: { ':pk': pk, ':from': `${prefix}${firstDay}`, ':end': prefixEnd(prefix) },
        },
        QUEUE_SHARDS * (RETENTION_DAYS + 2),
      );
      const entry = emptyCounts(queue);
      sum(shards, entry.counts);
      sum(shards, entry.totals);
      const finished = { completed: 0, dead: 0 };
      sum(days, finished);
      return { ...entry, counts: { ...entry.counts, ...finished } };
    }),
  );
  return counts.sort((a, b) => a.queue.localeCompare(b.queue));
}

export interface FactoryQueue {
  orgId: string;
  queue: string;
  live: Record<LiveStatus, number>;
}

/**
 * Every job-lane queue of the instance with its live counts, from gsi1 `JQ#FACTORY` (one Query, at most
 * `max` counter items): how the factory finds work without reading a single job.
 */
export async function factoryQueues(max = 20_000): Promise<FactoryQueue[]> {
  const { items } = await queryUpTo<Record<string, unknown>>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': jobKeys.factoryQueues },
    },
    max,
  );
  const byQueue = new Map<string, FactoryQueue>();
  for (const item of items) {
    const orgId = String(item.org_id);
    const queue = String(item.queue);
    const id = `${orgId}#${queue}`;
    const entry = byQueue.get(id) ?? { orgId, queue, live: { scheduled: 0, queued: 0, retrying: 0, running: 0 } };
    byQueue.set(id, entry);
    for (const status of LIVE_STATUSES) entry.live[status] += Number(item[status] ?? 0);
  }
  return [...byQueue.values()];
}
