import { transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import {
  BASE_BACKOFF_SECONDS,
  isExpired,
  type JobItem,
  type JobRecord,
  MAX_BACKOFF_SECONDS,
  MAX_LEASE_SECONDS,
  MAX_RESULT_BYTES,
  toJobRecord,
} from '#lib/jobs/job-keys';
import { getJobItem } from '#lib/jobs/job-records';
import { assertFits } from '#lib/jobs/job-submit';
import {
  type Change,
  completeChange,
  deadChange,
  type HeldLease,
  heartbeatChange,
  retryChange,
} from '#lib/jobs/job-writes';
import { queueCall } from '#lib/jobs/jobs';
import type { RequestContext } from '#lib/kernel/context';

/**
 * What the worker holding a job's lease does with it: complete, fail (retry with backoff, or dead when
 * its attempts are used up) or extend the lease (heartbeat). Every write is conditional on the lease
 * still being the one the worker's claim received (its token): a worker whose lease ran out and whose
 * job was claimed again is refused (409), so it can never overwrite the new holder's result.
 */

export const backoffSeconds = (attempts: number): number =>
  Math.min(BASE_BACKOFF_SECONDS * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_SECONDS);

const leaseLost = (job: JobItem) =>
  new ConflictError(
    'This worker does not hold the job’s lease: it expired and the job was claimed again, or it ended',
    [{ path: 'lease_token', message: 'does not hold the job’s current lease', status: job.status }],
  );

async function apply(change: Change, lost: () => Error): Promise<JobItem> {
  try {
    await transact(change.writes);
    return change.next;
  } catch (error) {
    throw isConditionFailed(error, 'lease-lost') ? lost() : error;
  }
}

export interface Failure {
  error: string;
  /** Seconds before the retry; the backoff when absent. */
  retryInSeconds?: number;
  /** No retry, whatever attempts are left (the failure would repeat: an unknown job type). */
  permanent?: boolean;
}

/** Completes a job its caller holds (the item its claim answered); refused with 409 once the lease is lost. */
export const completeHeld = (orgId: string, held: JobItem, result: Record<string, unknown>, now: Date) =>
  apply(completeChange(orgId, held, leaseOf(held), result, now), () => leaseLost(held));

/** Fails a held job: retrying after its backoff while attempts are left, else dead. */
export function failHeld(orgId: string, held: JobItem, failure: Failure, now: Date): Promise<JobItem> {
  const lease = leaseOf(held);
  const error = failure.error.slice(0, 2000);
  if (failure.permanent || held.attempts >= held.max_attempts) {
    return apply(deadChange(orgId, held, error, now, lease), () => leaseLost(held));
  }
  const retryAt = new Date(now.getTime() + (failure.retryInSeconds ?? backoffSeconds(held.attempts)) * 1000);
  return apply(retryChange(orgId, held, lease, error, retryAt, now), () => leaseLost(held));
}

/** Extends a held job's lease to `seconds` from now (its timeout when not given). */
export function extendHeld(orgId: string, held: JobItem, now: Date, seconds?: number): Promise<JobItem> {
  const until = new Date(now.getTime() + Math.min(seconds ?? held.timeout_seconds, MAX_LEASE_SECONDS) * 1000);
  return apply(heartbeatChange(orgId, held, leaseOf(held), until, now), () => leaseLost(held));
}

const leaseOf = (held: JobItem): HeldLease => ({
  workerId: held.claimed_by as string,
  token: held.lease_token as string,
});

/** The lease as a worker presents it over HTTP. */
export interface LeaseInput {
  workerId: string;
  leaseToken: string;
}

/**
 * The job as its lease holder sees it: read consistently, 404 when the organization has no such job,
 * 409 when the caller's worker and token are not its current lease's.
 */
async function heldBy(ctx: RequestContext, id: string, lease: LeaseInput): Promise<{ orgId: string; job: JobItem }> {
  const orgId = requirePrincipal(ctx).orgId;
  const job = await getJobItem(orgId, id, true);
  if (!job || isExpired(job, ctx.ports.clock.now())) throw new NotFoundError('No job with this id');
  if (job.status !== 'running' || job.claimed_by !== lease.workerId || job.lease_token !== lease.leaseToken) {
    throw leaseLost(job);
  }
  return { orgId, job };
}

/** POST /task-queue/{id}/complete. */
export async function completeJob(
  ctx: RequestContext,
  id: string,
  lease: LeaseInput,
  result: Record<string, unknown>,
): Promise<JobRecord> {
  assertFits('result', result, MAX_RESULT_BYTES);
  return queueCall(async () => {
    const { orgId, job } = await heldBy(ctx, id, lease);
    return toJobRecord(await completeHeld(orgId, job, result, ctx.ports.clock.now()));
  });
}

/** POST /task-queue/{id}/fail. */
export async function failJob(
  ctx: RequestContext,
  id: string,
  lease: LeaseInput,
  failure: Failure,
): Promise<JobRecord> {
  return queueCall(async () => {
    const { orgId, job } = await heldBy(ctx, id, lease);
    return toJobRecord(await failHeld(orgId, job, failure, ctx.ports.clock.now()));
  });
}

/** POST /task-queue/{id}/heartbeat. */
export async function heartbeatJob(
  ctx: RequestContext,
  id: string,
  lease: LeaseInput,
  extendSeconds?: number,
): Promise<JobRecord> {
  return queueCall(async () => {
    const { orgId, job } = await heldBy(ctx, id, lease);
    return toJobRecord(await extendHeld(orgId, job, ctx.ports.clock.now(), extendSeconds));
  });
}
