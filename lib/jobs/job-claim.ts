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
 * - the first ready jobs in claim order (gsi1 READY: priority, then the longest available);
 * - the sweep: leases that ran out (gsi1 LEASE, by expiry), each taken over by this claim (a new
 *   attempt), put back in the queue (when this claim's filters do not take it) or, with no attempts
 *   left, made dead; and scheduled and retrying jobs whose time has come (gsi1 WAIT), made queued.
 *
 * The sweep runs first, at most once a SWEEP_MS per queue in a process (a busy queue need not pay two
 * more Queries a claim), and whenever the ready jobs do not fill the claim: a worker that finds nothing
 * has always looked at every key range.
 *
 * Workers racing for the same first jobs lose writes. Once a claim in this process lost one in a queue
 * (within CONTENTION_MS), its claims pick at random among the first few jobs of the top priority, so
 * that workers spread out; uncontended, a queue hands out each priority's jobs oldest first.
 */

export interface ClaimRequest {
  workerId: string;
  batchSize: number;
  filter?: ClaimFilter;
}

/** Expired leases and due jobs a sweep handles beyond its batch, so that a backlog of them drains. */
const EXTRA_EXPIRED = 4;
const MAX_PROMOTED = 25;
const ROUNDS = 4;
export const SWEEP_MS = 1000;
const CONTENTION_MS = 5000;

/** When a claim of this process last swept a queue, and last lost a write in it (clock milliseconds). */
const swept = new Map<string, number>();
const contended = new Map<string, number>();
const queueId = (ref: QueueRef) => `${ref.orgId}#${ref.lane}#${ref.queue}`;

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

/** Under contention: the top priority's jobs in random order, the rest in order. */
function spreadOut(candidates: JobItem[]): JobItem[] {
  const top = candidates.filter((job) => job.priority === candidates[0]?.priority);
  for (let at = top.length - 1; at > 0; at -= 1) {
    const other = Math.floor(Math.random() * (at + 1));
    [top[at], top[other]] = [top[other] as JobItem, top[at] as JobItem];
  }
  return [...top, ...candidates.slice(top.length)];
}

type Lease = () => { workerId: string; token: string };

/** Expired leases, then due waits, of one queue; answers the expired jobs this claim took over. */
async function sweep(ref: QueueRef, request: ClaimRequest, lease: Lease, now: Date): Promise<JobItem[]> {
  swept.set(queueId(ref), now.getTime());
  const claimed: JobItem[] = [];
  for (const seen of await expiredLeases(ref, now, request.batchSize + EXTRA_EXPIRED)) {
    if (seen.attempts >= seen.max_attempts) {
      const error = `The lease of its last attempt (${seen.attempts} of ${seen.max_attempts}) expired`;
      await attempt(deadChange(ref.orgId, seen, error, now));
    } else if (claimed.length < request.batchSize && matches(seen, request.filter)) {
      const job = await attempt(claimChange(ref.orgId, seen, lease(), now));
      if (job) claimed.push(job);
    } else {
      await attempt(requeueExpiredChange(ref.orgId, seen, now));
    }
  }
  const due = await dueJobs(ref, now, MAX_PROMOTED);
  await Promise.all(due.map((seen) => attempt(promoteChange(ref.orgId, seen, now))));
  return claimed;
}

/** Up to `want` ready jobs, in rounds while writes are lost to other workers. */
async function claimReady(ref: QueueRef, request: ClaimRequest, want: number, lease: Lease, now: Date) {
  const claimed: JobItem[] = [];
  const id = queueId(ref);
  for (let round = 0; round < ROUNDS && claimed.length < want; round += 1) {
    const left = want - claimed.length;
    const spread = now.getTime() - (contended.get(id) ?? Number.NEGATIVE_INFINITY) < CONTENTION_MS;
    const read = await readyJobs(ref, spread ? Math.min(left * 8 + 16, 200) : left, request.filter);
    const candidates = spread ? spreadOut(read) : read;
    let lost = 0;
    for (let at = 0; at < candidates.length && claimed.length < want; ) {
      const wave = candidates.slice(at, at + want - claimed.length);
      at += wave.length;
      const won = await Promise.all(wave.map((seen) => attempt(claimChange(ref.orgId, seen, lease(), now))));
      for (const job of won) if (job) claimed.push(job);
      lost += won.filter((job) => !job).length;
    }
    if (lost === 0 || read.length === 0) break;
    contended.set(id, now.getTime());
  }
  return claimed;
}

/**
 * Claims up to `batchSize` jobs of one queue for `workerId`, each with a lease of its `timeout_seconds`
 * and a new lease token. Answers the jobs as held (items), none when the queue has nothing to give.
 */
export async function claimFromQueue(ref: QueueRef, request: ClaimRequest, now: Date): Promise<JobItem[]> {
  const lease = () => ({ workerId: request.workerId, token: randomBase62(24) });
  const sweepDue = now.getTime() - (swept.get(queueId(ref)) ?? Number.NEGATIVE_INFINITY) >= SWEEP_MS;
  const claimed = sweepDue ? await sweep(ref, request, lease, now) : [];
  claimed.push(...(await claimReady(ref, request, request.batchSize - claimed.length, lease, now)));
  if (claimed.length < request.batchSize && !sweepDue) {
    claimed.push(...(await sweep(ref, { ...request, batchSize: request.batchSize - claimed.length }, lease, now)));
    claimed.push(...(await claimReady(ref, request, request.batchSize - claimed.length, lease, now)));
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
