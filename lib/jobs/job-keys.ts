import { type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where the job engine keeps its records (writes: lib/jobs/job-writes.ts; reads: lib/jobs/job-records.ts).
 * One engine serves two APIs: the task queue (`lane` `task`: workers outside the service claim over
 * HTTP) and the job queue (`lane` `job`: the service's own factory workers claim). A queue is named
 * within its lane and organization. Jobs grow with use, so they live in a partition of their own, and a
 * finished job expires (TTL) at the end of the RETENTION_DAYS-th UTC day after the day it finished.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | job | `T#<org>#JOBS` | `JOB#<id>` | id `job_` + 16 base62 characters |
 * | idempotency guard | `T#<org>#JOBS` | `IDEM#<lane>#<key>` | `job_id`; kept 7 days past the job's start |
 * | queue counts | `T#<org>#JQ` | `LIVE#<lane>#<queue>#<shard>` | live counts by status, all-time totals |
 * | queue day counts | `T#<org>#JQ` | `DAY#<lane>#<queue>#<yyyy-mm-dd>#<shard>` | completed, dead; TTL |
 *
 * A job waiting, held or finished is in exactly one key range of gsi1 (its engine state) and one of
 * gsi2 (its status), so that no read ever goes through the jobs of other states:
 *
 * | index | pk | sk | holds |
 * |---|---|---|---|
 * | gsi1 | `T#<org>#JQ#<lane>#<queue>#READY` | `<inverted priority>#<available_at>#<id>` | queued: claim order |
 * | gsi1 | `T#<org>#JQ#<lane>#<queue>#WAIT` | `<available_at>#<id>` | scheduled, retrying: by due time |
 * | gsi1 | `T#<org>#JQ#<lane>#<queue>#LEASE` | `<lease_expires_at>#<id>` | running: by lease expiry |
 * | gsi2 | `T#<org>#JQ#<lane>#<queue>#S#<status>` | `<time>#<id>` | every job, by status and its time |
 * | gsi1 | `JQ#FACTORY` | `<org>#<queue>#<shard>` | the live counts of every job-lane queue (factory) |
 *
 * gsi2's `<time>` is the moment that status is about: `run_at` (scheduled), `available_at` (queued,
 * retrying), `started_at` (running), `finished_at` (completed, dead). Finished jobs are listed from
 * the first day of the retention window on, so a job whose TTL has passed is never shown, even before
 * DynamoDB removes it. The counts are sharded counters kept in the transaction of every change of
 * status (lib/jobs/job-counts.ts).
 */

export const LANES = ['task', 'job'] as const;
export type Lane = (typeof LANES)[number];

export const JOB_STATUSES = ['scheduled', 'queued', 'retrying', 'running', 'completed', 'dead'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** Statuses a job may leave: counted as they are (`queued: 3`), not per day. */
export const LIVE_STATUSES = ['scheduled', 'queued', 'retrying', 'running'] as const;
export type LiveStatus = (typeof LIVE_STATUSES)[number];
export const FINISHED_STATUSES = ['completed', 'dead'] as const;
export type FinishedStatus = (typeof FINISHED_STATUSES)[number];

export type EngineState = 'READY' | 'WAIT' | 'LEASE';

/** Days a finished job is kept after the UTC day it finished. */
export const RETENTION_DAYS = 7;
/** How long an idempotency key is remembered past the job's first possible start. */
export const IDEMPOTENCY_DAYS = 7;
export const DEFAULT_QUEUE = 'default';
/** The farthest ahead a job may be scheduled. */
export const MAX_SCHEDULE_DAYS = 365;

export const PRIORITY_MIN = -1000;
export const PRIORITY_MAX = 1000;
export const DEFAULTS = { priority: 0, maxAttempts: 3, timeoutSeconds: 300 } as const;

/** A payload or a result is stored in the job's item, which DynamoDB limits to 400 KB. */
export const MAX_PAYLOAD_BYTES = 200_000;
export const MAX_RESULT_BYTES = 100_000;
/** The first retry waits this long, each further one twice as long, up to MAX_BACKOFF_SECONDS. */
export const BASE_BACKOFF_SECONDS = 10;
export const MAX_BACKOFF_SECONDS = 3600;
/** The longest lease a claim or a heartbeat gives. */
export const MAX_LEASE_SECONDS = 43_200;

/** A queue name becomes part of keys: letters, digits, `.`, `_`, `-`, never `#`. */
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const jobsPk = (orgId: string): string => `${tenantPk(orgId)}#JOBS`;
const queuePk = (orgId: string, lane: Lane, queue: string): string => `${tenantPk(orgId)}#JQ#${lane}#${queue}`;

/** Higher priorities first: 1000 becomes `0000`, -1000 becomes `2000`. */
const invertedPriority = (priority: number): string => String(PRIORITY_MAX - priority).padStart(4, '0');

export const jobKeys = {
  /** The partition of the organization's jobs and idempotency guards. */
  jobsPk,
  byId: (orgId: string, jobId: string): TableKey => ({ pk: jobsPk(orgId), sk: `JOB#${jobId}` }),
  idempotency: (orgId: string, lane: Lane, key: string): TableKey => ({
    pk: jobsPk(orgId),
    sk: `IDEM#${lane}#${key}`,
  }),
  state: (orgId: string, lane: Lane, queue: string, state: EngineState): string =>
    `${queuePk(orgId, lane, queue)}#${state}`,
  readySort: (priority: number, availableAt: string, id: string): string =>
    `${invertedPriority(priority)}#${availableAt}#${id}`,
  timeSort: (at: string, id: string): string => `${at}#${id}`,
  byStatus: (orgId: string, lane: Lane, queue: string, status: JobStatus): string =>
    `${queuePk(orgId, lane, queue)}#S#${status}`,
  countsPk: (orgId: string): string => `${tenantPk(orgId)}#JQ`,
  livePrefix: (lane: Lane, queue?: string): string => `LIVE#${lane}#${queue === undefined ? '' : `${queue}#`}`,
  live: (lane: Lane, queue: string, shard: number): string => `LIVE#${lane}#${queue}#${shard}`,
  dayPrefix: (lane: Lane, queue: string): string => `DAY#${lane}#${queue}#`,
  day: (lane: Lane, queue: string, day: string, shard: number): string => `DAY#${lane}#${queue}#${day}#${shard}`,
  factoryQueues: 'JQ#FACTORY',
  factoryQueueSort: (orgId: string, queue: string, shard: number): string => `${orgId}#${queue}#${shard}`,
};

/** Every bound of the sort keys that begin with a time at or before `at`. */
export const upTo = (at: string): string => `${at}#\u{10FFFF}`;

export interface JobItem extends TableKey {
  id: string;
  lane: Lane;
  queue: string;
  type: string;
  status: JobStatus;
  payload: Record<string, unknown>;
  priority: number;
  tenant_id: number | null;
  max_attempts: number;
  timeout_seconds: number;
  /** Claims so far, the current one included. */
  attempts: number;
  idempotency_key: string | null;
  run_at: string | null;
  /** When the job may next be claimed (run_at, a retry's backoff, or its submission). */
  available_at: string;
  claimed_by: string | null;
  /** Secret of the current claim: only its holder may complete, fail or extend it. */
  lease_token: string | null;
  lease_expires_at: string | null;
  result: Record<string, unknown> | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  gsi1pk?: string;
  gsi1sk?: string;
  gsi2pk: string;
  gsi2sk: string;
  expires_at?: number;
}

/** A job as both APIs show it: the spec's names (`task_type`, `queue_name`), never keys or the lease token. */
export interface JobRecord {
  id: string;
  queue_name: string;
  task_type: string;
  status: JobStatus;
  payload: Record<string, unknown>;
  priority: number;
  tenant_id: number | null;
  attempts: number;
  max_attempts: number;
  timeout_seconds: number;
  idempotency_key: string | null;
  run_at: string | null;
  available_at: string;
  claimed_by: string | null;
  lease_expires_at: string | null;
  result: Record<string, unknown> | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** A claimed job as its worker receives it: with the lease token it must send back. */
export type ClaimedJob = JobRecord & { lease_token: string };

export const toJobRecord = (item: JobItem): JobRecord => ({
  id: item.id,
  queue_name: item.queue,
  task_type: item.type,
  status: item.status,
  payload: item.payload ?? {},
  priority: item.priority ?? DEFAULTS.priority,
  tenant_id: item.tenant_id ?? null,
  attempts: item.attempts ?? 0,
  max_attempts: item.max_attempts ?? DEFAULTS.maxAttempts,
  timeout_seconds: item.timeout_seconds ?? DEFAULTS.timeoutSeconds,
  idempotency_key: item.idempotency_key ?? null,
  run_at: item.run_at ?? null,
  available_at: item.available_at,
  claimed_by: item.claimed_by ?? null,
  lease_expires_at: item.lease_expires_at ?? null,
  result: item.result ?? null,
  last_error: item.last_error ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
  started_at: item.started_at ?? null,
  finished_at: item.finished_at ?? null,
});

export const toClaimedJob = (item: JobItem): ClaimedJob => ({
  ...toJobRecord(item),
  lease_token: item.lease_token as string,
});

/** `2025-01-31` of a time, UTC. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

const DAY_MS = 86_400_000;

/** The first UTC day whose finished jobs are still kept, as `yyyy-mm-dd`. */
export const firstKeptDay = (now: Date): string => dayOf(new Date(now.getTime() - RETENTION_DAYS * DAY_MS));

/** When a job finished at `at` (and its day's counts) expire: the start of the day after its last kept day. */
export const finishedExpiry = (at: Date): number => {
  const dayStart = Date.parse(`${dayOf(at)}T00:00:00.000Z`);
  return Math.floor((dayStart + (RETENTION_DAYS + 1) * DAY_MS) / 1000);
};

/** Whether a stored item is past its TTL (DynamoDB removes expired items only eventually). */
export const isExpired = (item: { expires_at?: number }, now: Date): boolean =>
  item.expires_at !== undefined && item.expires_at * 1000 <= now.getTime();

/** The status a job's engine state stands for, and the time its gsi2 key sorts by. */
export function statusTime(item: Pick<JobItem, 'status' | 'run_at' | 'available_at' | 'started_at' | 'finished_at'>) {
  switch (item.status) {
    case 'scheduled':
      return item.run_at ?? item.available_at;
    case 'queued':
    case 'retrying':
      return item.available_at;
    case 'running':
      return item.started_at ?? item.available_at;
    default:
      return item.finished_at ?? item.available_at;
  }
}
