import { randomBase62 } from '#lib/crypto/secrets';
import { type TableKey, tenantPk } from '#lib/db/keys';
import { itemIsNew, type TransactItem } from '#lib/db/transactions';

/**
 * Queued jobs of an organization. Whatever queues work (a git push with new logos, a product's new
 * colours) adds the job to the transaction of the change that asks for it, so a job exists exactly
 * when its cause was recorded. The job queue endpoints and their workers come later and claim jobs in
 * this shape.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | job | `T#<org>` | `JOB#<id>` | id `job_` + 16 base62 characters |
 */
export const jobKeys = {
  byId: (orgId: string, jobId: string): TableKey => ({ pk: tenantPk(orgId), sk: `JOB#${jobId}` }),
  prefix: 'JOB#',
};

export interface NewJob {
  /** What the worker does, e.g. `brand-assets`. */
  type: string;
  payload: Record<string, unknown>;
  /** Names the cause, so that the same cause can be recognised as already queued. */
  idempotencyKey: string;
}

/**
 * A queued job as a write for the caller's transaction, with the id it will have.
 *
 * @example
 * const job = queueJob(orgId, { type: 'brand-assets', payload, idempotencyKey: `git:${deliveryId}` }, now);
 * await transact([...writes, job.write]);
 */
export function queueJob(orgId: string, job: NewJob, now: Date): { id: string; write: TransactItem } {
  const id = `job_${randomBase62(16)}`;
  const at = now.toISOString();
  return {
    id,
    write: {
      Put: {
        Item: {
          ...jobKeys.byId(orgId, id),
          id,
          type: job.type,
          status: 'queued',
          payload: job.payload,
          idempotency_key: job.idempotencyKey,
          attempts: 0,
          created_at: at,
          updated_at: at,
        },
        ConditionExpression: itemIsNew,
      },
    },
  };
}
