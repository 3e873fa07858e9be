import { table } from '#lib/db/table';
import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, ValidationError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import {
  IDEMPOTENCY_DAYS,
  isExpired,
  type JobRecord,
  jobKeys,
  type Lane,
  MAX_PAYLOAD_BYTES,
  MAX_SCHEDULE_DAYS,
  toJobRecord,
} from '#lib/jobs/job-keys';
import { getJobItem } from '#lib/jobs/job-records';
import { newJobItem, newJobWrites } from '#lib/jobs/job-writes';
import { newJobId, queueCall } from '#lib/jobs/jobs';
import type { RequestContext } from '#lib/kernel/context';

/** Submitting a job: POST /task-queue/submit, POST /job-queue/submit and /job-queue/submit-scheduled. */

export interface JobSubmission {
  type: string;
  payload?: Record<string, unknown>;
  queue?: string;
  priority?: number;
  tenantId?: number;
  maxAttempts?: number;
  timeoutSeconds?: number;
  idempotencyKey?: string;
  /** Not claimable before this time; it must be in the future. */
  runAt?: Date;
}

/** The submit body of both APIs (the spec's names: `task_type`, `queue_name`) in the engine's terms. */
export function submission(body: {
  task_type: string;
  payload?: Record<string, unknown>;
  queue_name?: string;
  priority?: number;
  tenant_id?: number;
  max_attempts?: number;
  timeout_seconds?: number;
  idempotency_key?: string;
}): JobSubmission {
  return {
    type: body.task_type,
    payload: body.payload,
    queue: body.queue_name,
    priority: body.priority,
    tenantId: body.tenant_id,
    maxAttempts: body.max_attempts,
    timeoutSeconds: body.timeout_seconds,
    idempotencyKey: body.idempotency_key,
  };
}

/** Throws a ValidationError naming `field` when `value` serializes to more than `max` bytes. */
export function assertFits(field: string, value: unknown, max: number): void {
  if (Buffer.byteLength(JSON.stringify(value ?? null)) > max) {
    throw new ValidationError(`The ${field} is too large`, [{ path: field, message: `must be at most ${max} bytes` }]);
  }
}

const DAY_MS = 86_400_000;
/** Transaction collisions with a concurrent submit of the same key are sent again this often. */
const ATTEMPTS = 4;

/**
 * Queues a job in the caller's organization. With an idempotency key, one transaction writes the key's
 * guard beside the job: when the key was used before (or is being used at this moment by a concurrent
 * submit), the guard refuses, and the first job is answered instead (`created: false`), so that every
 * submit of a key answers the same job and exactly one is queued.
 */
export async function submitJob(
  ctx: RequestContext,
  lane: Lane,
  input: JobSubmission,
): Promise<{ job: JobRecord; created: boolean }> {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  if (input.runAt !== undefined && input.runAt.getTime() <= now.getTime()) {
    throw new ValidationError('run_at must be in the future', [{ path: 'run_at', message: 'must be in the future' }]);
  }
  if (input.runAt !== undefined && input.runAt.getTime() > now.getTime() + MAX_SCHEDULE_DAYS * DAY_MS) {
    throw new ValidationError('run_at is too far ahead', [
      { path: 'run_at', message: `must be at most ${MAX_SCHEDULE_DAYS} days ahead` },
    ]);
  }
  assertFits('payload', input.payload ?? {}, MAX_PAYLOAD_BYTES);
  return queueCall(async () => {
    const key = input.idempotencyKey;
    for (let attempt = 1; ; attempt += 1) {
      const item = newJobItem(
        orgId,
        newJobId(),
        {
          lane,
          queue: input.queue,
          type: input.type,
          payload: input.payload ?? {},
          priority: input.priority,
          tenantId: input.tenantId,
          maxAttempts: input.maxAttempts,
          timeoutSeconds: input.timeoutSeconds,
          idempotencyKey: key,
          runAt: input.runAt,
        },
        now,
      );
      const writes = newJobWrites(orgId, item, now);
      if (key === undefined) {
        await transact(writes);
        return { job: toJobRecord(item), created: true };
      }
      try {
        await transact([guardWrite(orgId, lane, key, item.id, input.runAt ?? now, now), ...writes]);
        return { job: toJobRecord(item), created: true };
      } catch (error) {
        // Refused by the guard, or collided in flight with the submit that is writing it.
        if (!(error instanceof ConflictError)) throw error;
        const first = await jobOfKey(orgId, lane, key, now);
        if (first) return { job: toJobRecord(first), created: false };
        if (attempt >= ATTEMPTS || isConditionFailed(error, 'job-exists')) throw error;
      }
    }
  });
}

/**
 * The guard of an idempotency key: kept IDEMPOTENCY_DAYS past the job's first possible start, and
 * taken over once expired (DynamoDB removes expired items only eventually).
 */
function guardWrite(orgId: string, lane: Lane, key: string, jobId: string, start: Date, now: Date): TransactItem {
  return {
    Put: {
      Item: {
        ...jobKeys.idempotency(orgId, lane, key),
        job_id: jobId,
        created_at: now.toISOString(),
        expires_at: Math.floor((start.getTime() + IDEMPOTENCY_DAYS * DAY_MS) / 1000),
      },
      ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
      ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
    },
    reason: 'idempotent-repeat',
  };
}

/** The job a key's live guard names, read consistently; none when there is no such guard (or job). */
async function jobOfKey(orgId: string, lane: Lane, key: string, now: Date) {
  const { Item: guard } = await table.get({ Key: jobKeys.idempotency(orgId, lane, key), ConsistentRead: true });
  if (!guard || isExpired(guard, now)) return undefined;
  const job = await getJobItem(orgId, String(guard.job_id), true);
  return job && !isExpired(job, now) ? job : undefined;
}
