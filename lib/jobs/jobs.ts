import { randomBase62 } from '#lib/crypto/secrets';
import type { TransactItem } from '#lib/db/transactions';
import { ServiceUnavailableError } from '#lib/errors';
import { newJobItem, newJobWrites } from '#lib/jobs/job-writes';

/**
 * Jobs queued by other areas' changes. Whatever queues work (a git push with new logos, a product's new
 * colours) adds the job to the transaction of the change that asks for it, so a job exists exactly
 * when its cause was recorded. These jobs go to the job queue (lane `job`, queue `default`), where the
 * factory workers (lib/factory) claim them by type; the engine itself is lib/jobs/job-*.ts.
 */

export const newJobId = (): string => `job_${randomBase62(16)}`;

export interface QueuedJob {
  /** What the worker does, e.g. `brand-assets`. */
  type: string;
  payload: Record<string, unknown>;
  /**
   * Names the cause, kept on the job so that it can be traced to it. The callers' causes happen once
   * (a webhook delivery, a recorded change), so no idempotency guard is written.
   */
  idempotencyKey: string;
  /** The job queue's queue; `default` unless given. */
  queue?: string;
}

/**
 * A queued job as writes for the caller's transaction (the job and its queue's counts), with its id.
 *
 * @example
 * const job = queueJob(orgId, { type: 'brand-assets', payload, idempotencyKey: `git:${deliveryId}` }, now);
 * await transact([...writes, ...job.writes]);
 */
export function queueJob(orgId: string, job: QueuedJob, now: Date): { id: string; writes: TransactItem[] } {
  const id = newJobId();
  const item = newJobItem(
    orgId,
    id,
    { lane: 'job', queue: job.queue, type: job.type, payload: job.payload, idempotencyKey: job.idempotencyKey },
    now,
  );
  return { id, writes: newJobWrites(orgId, item, now) };
}

/**
 * Runs a queue operation, saying "the queue is unavailable" when the table cannot answer (the 503 the
 * database boundary raises, lib/db/unavailable.ts), so a worker knows to back off and try again.
 */
export async function queueCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof ServiceUnavailableError) {
      throw new ServiceUnavailableError(
        'The queue is unavailable; try again shortly',
        error,
        Number(error.headers['Retry-After'] ?? 1),
      );
    }
    throw error;
  }
}
