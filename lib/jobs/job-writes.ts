import { activityWrites } from '#lib/activity/activity-log';
import { itemIsNew } from '#lib/db/conditions';
import type { TransactItem } from '#lib/db/transactions';
import { type CountChange, countWrites } from '#lib/jobs/job-counts';
import {
  DEFAULT_QUEUE,
  DEFAULTS,
  finishedExpiry,
  type JobItem,
  type JobStatus,
  jobKeys,
  type Lane,
  statusTime,
} from '#lib/jobs/job-keys';

/**
 * Every change of a job, as writes for one transaction: the job's whole next item, put on the condition
 * that it is still the version that was read (`version`, raised by every write), and the counter writes
 * of its change of status. A job is in exactly one engine state of gsi1 (READY, WAIT, LEASE; none once
 * finished) and one status range of gsi2; both follow from its status here, never set by hand.
 */

export interface NewJob {
  lane: Lane;
  queue?: string;
  /** What the worker does, e.g. `brand-assets`. */
  type: string;
  payload: Record<string, unknown>;
  priority?: number;
  tenantId?: number | null;
  maxAttempts?: number;
  timeoutSeconds?: number;
  idempotencyKey?: string | null;
  /** Not claimable before this time. */
  runAt?: Date | null;
}

/** The job is still as it was read: nothing changed it since. */
const versionIs = '#version = :seen_version';
/** The worker asking still holds the job's current lease. */
const leaseHeldBy = '#status = :running AND lease_token = :token AND claimed_by = :worker';
/** The lease ran out (a heartbeat since would have moved it). */
const leaseExpired = 'lease_expires_at < :now';

/** The index keys a job's status puts it under. */
export function indexKeys(orgId: string, item: JobItem): Pick<JobItem, 'gsi1pk' | 'gsi1sk' | 'gsi2pk' | 'gsi2sk'> {
  const { lane, queue, id } = item;
  const byStatus = {
    gsi2pk: jobKeys.byStatus(orgId, lane, queue, item.status),
    gsi2sk: jobKeys.timeSort(statusTime(item), id),
  };
  switch (item.status) {
    case 'queued':
      return {
        gsi1pk: jobKeys.state(orgId, lane, queue, 'READY'),
        gsi1sk: jobKeys.readySort(item.priority, item.available_at, id),
        ...byStatus,
      };
    case 'scheduled':
    case 'retrying':
      return {
        gsi1pk: jobKeys.state(orgId, lane, queue, 'WAIT'),
        gsi1sk: jobKeys.timeSort(item.available_at, id),
        ...byStatus,
      };
    case 'running':
      return {
        gsi1pk: jobKeys.state(orgId, lane, queue, 'LEASE'),
        gsi1sk: jobKeys.timeSort(item.lease_expires_at as string, id),
        ...byStatus,
      };
    default:
      return byStatus;
  }
}

/** A job's item with its index keys (and, once finished, its expiry) as its status says. */
export function withIndexes(orgId: string, item: JobItem): JobItem {
  const { gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, expires_at: _expires, ...rest } = item;
  const finished = item.status === 'completed' || item.status === 'dead';
  const next = { ...rest, ...indexKeys(orgId, item) } as JobItem;
  if (finished) next.expires_at = finishedExpiry(new Date(item.finished_at as string));
  return next;
}

/** A new job's item: `scheduled` until `runAt` when that is later than `now`, else `queued`. */
export function newJobItem(orgId: string, id: string, job: NewJob, now: Date): JobItem & { version: number } {
  const at = now.toISOString();
  const runAt = job.runAt && job.runAt.getTime() > now.getTime() ? job.runAt.toISOString() : null;
  const status: JobStatus = runAt ? 'scheduled' : 'queued';
  const item = {
    ...jobKeys.byId(orgId, id),
    id,
    lane: job.lane,
    queue: job.queue ?? DEFAULT_QUEUE,
    type: job.type,
    status,
    payload: job.payload,
    priority: job.priority ?? DEFAULTS.priority,
    tenant_id: job.tenantId ?? null,
    max_attempts: job.maxAttempts ?? DEFAULTS.maxAttempts,
    timeout_seconds: job.timeoutSeconds ?? DEFAULTS.timeoutSeconds,
    attempts: 0,
    idempotency_key: job.idempotencyKey ?? null,
    run_at: runAt,
    available_at: runAt ?? at,
    claimed_by: null,
    lease_token: null,
    lease_expires_at: null,
    result: null,
    last_error: null,
    created_at: at,
    updated_at: at,
    started_at: null,
    finished_at: null,
    version: 0,
    gsi2pk: '',
    gsi2sk: '',
  };
  return withIndexes(orgId, item) as JobItem & { version: number };
}

/** The writes of a new job: the job (refused with reason `job-exists` should its id be taken) and its counts. */
export function newJobWrites(orgId: string, item: JobItem, now: Date): TransactItem[] {
  return [
    { Put: { Item: item, ConditionExpression: itemIsNew }, reason: 'job-exists' },
    ...countWrites(orgId, item.lane, item.queue, now, { to: item.status, add: { submitted: 1 } }),
  ];
}

type Versioned = JobItem & { version?: number };

export interface Change {
  /** The item as it will be (status, times, holder); index keys, expiry and version are added here. */
  next: JobItem;
  writes: TransactItem[];
}

/**
 * A job's move from `seen` to `changes`, on the condition that it is still `seen` (its version) and,
 * for `guard`, what else must hold; refused with reason `reason`.
 */
function move(
  orgId: string,
  seen: Versioned,
  changes: Partial<JobItem>,
  now: Date,
  options: { reason: string; add?: CountChange['add']; guard?: { expression: string; values: object } },
): Change {
  const version = seen.version ?? 0;
  const next = withIndexes(orgId, { ...seen, ...changes, updated_at: now.toISOString() } as JobItem);
  const item = { ...next, version: version + 1 };
  const condition = options.guard ? `${versionIs} AND ${options.guard.expression}` : versionIs;
  return {
    next: item,
    writes: [
      {
        Put: {
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeNames: {
            '#version': 'version',
            ...(condition.includes('#status') ? { '#status': 'status' } : {}),
          },
          ExpressionAttributeValues: { ':seen_version': version, ...options.guard?.values },
        },
        reason: options.reason,
      },
      ...countWrites(orgId, seen.lane, seen.queue, now, { from: seen.status, to: next.status, add: options.add }),
    ],
  };
}

/** A queued job (or one whose lease ran out) handed to `workerId` with a fresh lease and token. */
export function claimChange(orgId: string, seen: JobItem, claim: { workerId: string; token: string }, now: Date) {
  const expired = seen.status === 'running';
  return move(
    orgId,
    seen,
    {
      status: 'running',
      attempts: (seen.attempts ?? 0) + 1,
      claimed_by: claim.workerId,
      lease_token: claim.token,
      lease_expires_at: new Date(now.getTime() + seen.timeout_seconds * 1000).toISOString(),
      started_at: now.toISOString(),
      ...(expired ? { last_error: leaseExpiredError(seen) } : {}),
    },
    now,
    {
      reason: 'claimed',
      ...(expired
        ? { add: { failed_attempts: 1 }, guard: { expression: leaseExpired, values: { ':now': now.toISOString() } } }
        : {}),
    },
  );
}

const leaseExpiredError = (seen: JobItem): string =>
  `The lease of attempt ${seen.attempts} (worker ${seen.claimed_by}) expired before the job was completed`;

/** A job whose lease ran out, back in its queue for any worker (one this claim's filters do not take). */
export function requeueExpiredChange(orgId: string, seen: JobItem, now: Date): Change {
  return move(
    orgId,
    seen,
    { ...released(), status: 'queued', available_at: now.toISOString(), last_error: leaseExpiredError(seen) },
    now,
    {
      reason: 'claimed',
      add: { failed_attempts: 1 },
      guard: { expression: leaseExpired, values: { ':now': now.toISOString() } },
    },
  );
}

/** A due scheduled or retrying job, now claimable in priority order. */
export function promoteChange(orgId: string, seen: JobItem, now: Date): Change {
  return move(orgId, seen, { status: 'queued' }, now, { reason: 'promoted' });
}

const released = () => ({ claimed_by: null, lease_token: null, lease_expires_at: null });

/** A job whose attempts are used up: dead, with why, and an activity entry (the system acted). */
export function deadChange(orgId: string, seen: JobItem, error: string, now: Date, lease?: HeldLease): Change {
  const change = move(
    orgId,
    seen,
    { ...released(), status: 'dead', last_error: error, finished_at: now.toISOString() },
    now,
    lease
      ? { reason: 'lease-lost', add: { dead_total: 1, failed_attempts: 1 }, guard: heldGuard(lease) }
      : {
          reason: 'claimed',
          add: { dead_total: 1, failed_attempts: 1 },
          guard: { expression: leaseExpired, values: { ':now': now.toISOString() } },
        },
  );
  const entry = {
    actor_type: 'system' as const,
    actor_id: 'system:job-engine',
    action: 'job.dead',
    entity_type: 'job',
    entity_id: seen.id,
    metadata: { queue: seen.queue, type: seen.type, attempts: seen.attempts, error: error.slice(0, 500) },
  };
  return { ...change, writes: [...change.writes, ...activityWrites(orgId, entry, now)] };
}

/** Who holds a lease: the worker and the token its claim received. */
export interface HeldLease {
  workerId: string;
  token: string;
}

const heldGuard = (lease: HeldLease) => ({
  expression: leaseHeldBy,
  values: { ':running': 'running', ':token': lease.token, ':worker': lease.workerId },
});

/** A held job done: its result kept, its run time counted. */
export function completeChange(
  orgId: string,
  seen: JobItem,
  lease: HeldLease,
  result: Record<string, unknown>,
  now: Date,
): Change {
  const runMs = Math.max(0, now.getTime() - Date.parse(seen.started_at ?? seen.updated_at));
  return move(orgId, seen, { ...released(), status: 'completed', result, finished_at: now.toISOString() }, now, {
    reason: 'lease-lost',
    add: { completed_total: 1, run_ms: runMs },
    guard: heldGuard(lease),
  });
}

/** A held job failed with attempts left: retrying, claimable again from `retryAt`. */
export function retryChange(
  orgId: string,
  seen: JobItem,
  lease: HeldLease,
  error: string,
  retryAt: Date,
  now: Date,
): Change {
  return move(
    orgId,
    seen,
    { ...released(), status: 'retrying', last_error: error, available_at: retryAt.toISOString() },
    now,
    { reason: 'lease-lost', add: { failed_attempts: 1 }, guard: heldGuard(lease) },
  );
}

/** A held job's lease extended to `until` (its place in the lease index moves with it). */
export function heartbeatChange(orgId: string, seen: JobItem, lease: HeldLease, until: Date, now: Date): Change {
  return move(orgId, seen, { lease_expires_at: until.toISOString() }, now, {
    reason: 'lease-lost',
    guard: heldGuard(lease),
  });
}
