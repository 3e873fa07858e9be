import { randomBase62 } from '#lib/crypto/secrets';
import { transact } from '#lib/db/transactions';
import { ConflictError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import { type ClaimedJob, DEFAULT_QUEUE, type JobItem, type Lane, toClaimedJob } from '#lib/jobs/job-keys';
import { type ClaimFilter, dueJobs, expiredLeases, type QueueRef, readyJobs } from '#lib/jobs/job-records';
import { type Change, claimChange, deadChange, promoteChange, requeueExpiredChange } from '#lib/jobs/job-writes';
import { queueCall } from '#lib/jobs/jobs';
import type { RequestContext } from '#lib/kernel/context';

/**
 * Claiming jobs: POST /task-queue/claim, and the factory workers' claims. A claim is a conditional write
 * of the job's next version: of two workers that read the same job, one write lands and the other is
 * refused, so a job is never handed to two workers. Every read is a bounded Query of one key range:
 *
 * 1. leases that ran out (gsi1 LEASE, by expiry): each is taken over by this claim (a new attempt),
 *    put back in the queue (when this claim's filters do not take it) or, with no attempts left, dead;
 * 2. scheduled and retrying jobs whose time has come (gsi1 WAIT, by due time) become queued;
 * 3. the first ready jobs in claim order (gsi1 READY: priority, then the longest available).
 *
 * Workers racing for the same first jobs each lose at most one round: after a lost write, a claim picks
 * among the first few jobs of the top priority from a random start, so that workers spread out.
 */

export interface ClaimRequest {
  workerId: string;
  batchSize: number;
  filter?: ClaimFilter;
}

/** Expired leases and due jobs a claim handles beyond its batch, so that a backlog of them drains. */
const EXTRA_EXPIRED = 4;
const MAX_PROMOTED = 25;
const ROUNDS = 4;

/** The change's writes, or nothing when another write changed the job first. */
async function attempt(change: Change): Promise<JobItem | undefined> {
  try {
    await transact(change.writes);
    return change.next;
  } catch (error) {
    if (error instanceof ConflictError) return undefined;
    throw error;
  }
}

const matches = (job: JobItem, filter: ClaimFilter = {}): boolean =>
  (filter.type === undefined || job.type === filter.type) &&
  (filter.tenantId === undefined || job.tenant_id === filter.tenantId);

/** After a lost race: the top priority's jobs from a random start, the rest in order. */
function spreadOut(candidates: JobItem[]): JobItem[] {
  const top = candidates.filter((job) => job.priority === candidates[0]?.priority);
  const start = Math.floor(Math.random() * top.length);
  return [...top.slice(start), ...top.slice(0, start), ...candidates.slice(top.length)];
}

/**
 * Claims up to `batchSize` jobs of one queue for `workerId`, each with a lease of its `timeout_seconds`
 * and a new lease token. Answers the jobs as held (items), none when the queue has nothing to give.
 */
export async function claimFromQueue(ref: QueueRef, request: ClaimRequest, now: Date): Promise<JobItem[]> {
  const { orgId } = ref;
  const claimed: JobItem[] = [];
  const lease = () => ({ workerId: request.workerId, token: randomBase62(24) });

  for (const seen of await expiredLeases(ref, now, request.batchSize + EXTRA_EXPIRED)) {
    if (seen.attempts >= seen.max_attempts) {
      const error = `The lease of its last attempt (${seen.attempts} of ${seen.max_attempts}) expired`;
      await attempt(deadChange(orgId, seen, error, now));
    } else if (claimed.length < request.batchSize && matches(seen, request.filter)) {
      const job = await attempt(claimChange(orgId, seen, lease(), now));
      if (job) claimed.push(job);
    } else {
      await attempt(requeueExpiredChange(orgId, seen, now));
    }
  }
  if (claimed.length >= request.batchSize) return claimed;

  const due = await dueJobs(ref, now, MAX_PROMOTED);
  await Promise.all(due.map((seen) => attempt(promoteChange(orgId, seen, now))));

  let contended = false;
  for (let round = 0; round < ROUNDS && claimed.length < request.batchSize; round += 1) {
    const want = request.batchSize - claimed.length;
    const read = await readyJobs(ref, contended ? want * 2 + 8 : want, request.filter);
    const candidates = contended ? spreadOut(read) : read;
    let lost = 0;
    for (let at = 0; at < candidates.length && claimed.length < request.batchSize; ) {
      const wave = candidates.slice(at, at + request.batchSize - claimed.length);
      at += wave.length;
      const won = await Promise.all(wave.map((seen) => attempt(claimChange(orgId, seen, lease(), now))));
      for (const job of won) if (job) claimed.push(job);
      lost += won.filter((job) => !job).length;
    }
    if (lost === 0 || read.length === 0) break;
    contended = true;
  }
  return claimed;
}

export interface ClaimInput {
  workerId: string;
  queue?: string;
  type?: string;
  tenantId?: number;
  batchSize?: number;
}

/** POST /task-queue/claim: the jobs claimed for the worker, or null when there were none to claim. */
export async function claimJobs(ctx: RequestContext, lane: Lane, input: ClaimInput): Promise<ClaimedJob[] | null> {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  const jobs = await queueCall(() =>
    claimFromQueue(
      { orgId, lane, queue: input.queue ?? DEFAULT_QUEUE },
      {
        workerId: input.workerId,
        batchSize: input.batchSize ?? 1,
        filter: { type: input.type, tenantId: input.tenantId },
      },
      now,
    ),
  );
  return jobs.length > 0 ? jobs.map(toClaimedJob) : null;
}
