/**
 * Claim throughput of the job engine on DynamoDB Local: N jobs submitted to one queue, then 8 workers at
 * once claiming and completing them until the queue is empty. Two ways:
 *
 * - over HTTP, as task-queue workers do: POST /task-queue/claim and POST /task-queue/{id}/complete
 *   through the real function (authentication and rate limit included), with batch_size 1 and 10;
 * - in process, as the factory workers do: claimFromQueue and completeHeld, batch 1 and 10.
 *
 * Prints per run: jobs per second (claimed and completed), DynamoDB calls per job by operation (what
 * authentication and the rate limit read and write included for HTTP), and the claims lost to another
 * worker (a conditional write refused). Checks that every job was completed exactly once; asserts no
 * timing.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-job-claims');

const { dynamo: client } = await import('#lib/db/client');
const calls = new Map<string, number>();
let counting = false;
let refused = 0;
client.middlewareStack.add(
  (next, context) => async (args) => {
    const name = (context.commandName as string).replace('Command', '');
    if (counting) calls.set(name, (calls.get(name) ?? 0) + 1);
    try {
      return await next(args);
    } catch (error) {
      if (counting && (error as Error).name === 'TransactionCanceledException') refused += 1;
      throw error;
    }
  },
  { step: 'initialize', name: 'countCalls' },
);

const { newUser, call } = await import('#tests/support/identity');
const { taskQueueHandler } = await import('#functions/http/task-queue');
const { claimFromQueue } = await import('#lib/jobs/job-claim');
const { completeHeld } = await import('#lib/jobs/job-finish');

const api = taskQueueHandler();
const owner = await newUser('bench');
const WORKERS = 8;

async function submitAll(queue: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < n; start += 50) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(50, n - start) }, (_, at) =>
        call(api, 'POST', '/task-queue/submit', {
          token: owner.token,
          body: { task_type: 'bench', queue_name: queue, payload: { index: start + at } },
        }),
      ),
    );
    for (const answer of answers) {
      if (answer.status !== 201) throw new Error(`submit failed: ${JSON.stringify(answer.body)}`);
      ids.push(answer.body.data.id);
    }
  }
  return ids;
}

/** Over HTTP: each worker claims a batch, completes each job, until a claim answers null. */
async function httpWorker(queue: string, worker: number, batch: number, done: string[]): Promise<void> {
  const workerId = `http-${worker}`;
  for (;;) {
    const claimed = await call(api, 'POST', '/task-queue/claim', {
      token: owner.token,
      body: { worker_id: workerId, queue_name: queue, batch_size: batch },
    });
    if (claimed.status !== 200) throw new Error(`claim failed: ${JSON.stringify(claimed.body)}`);
    if (claimed.body.data === null) return;
    for (const job of claimed.body.data as Array<{ id: string; lease_token: string }>) {
      const completed = await call(api, 'POST', `/task-queue/${job.id}/complete`, {
        token: owner.token,
        body: { worker_id: workerId, lease_token: job.lease_token, result: { ok: true } },
      });
      if (completed.status !== 200) throw new Error(`complete failed: ${JSON.stringify(completed.body)}`);
      done.push(job.id);
    }
  }
}

/** In process: the engine's own calls, as a factory worker makes them. */
async function engineWorker(queue: string, worker: number, batch: number, done: string[]): Promise<void> {
  const ref = { orgId: owner.orgId, lane: 'task' as const, queue };
  for (;;) {
    const jobs = await claimFromQueue(ref, { workerId: `engine-${worker}`, batchSize: batch }, new Date());
    if (jobs.length === 0) return;
    for (const job of jobs) {
      await completeHeld(owner.orgId, job, { ok: true }, new Date());
      done.push(job.id);
    }
  }
}

async function bench(label: string, n: number, batch: number, way: 'http' | 'engine', print = true): Promise<void> {
  const queue = `${way}-${batch}-${n}-${Math.random().toString(36).slice(2, 8)}`;
  const ids = await submitAll(queue, n);
  const done: string[] = [];
  calls.clear();
  refused = 0;
  counting = true;
  const started = performance.now();
  const work = way === 'http' ? httpWorker : engineWorker;
  await Promise.all(Array.from({ length: WORKERS }, (_, worker) => work(queue, worker, batch, done)));
  const seconds = (performance.now() - started) / 1000;
  counting = false;
  if (done.length !== n || new Set(done).size !== n || !ids.every((id) => done.includes(id))) {
    throw new Error(`${label}: ${done.length} completions of ${new Set(done).size} jobs, expected ${n} once each`);
  }
  if (!print) return;
  const total = [...calls.values()].reduce((sum, count) => sum + count, 0);
  const byOperation = [...calls.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => `${name} ${(count / n).toFixed(2)}`)
    .join(', ');
  console.log(
    `${label.padEnd(34)} ${(n / seconds).toFixed(0).padStart(5)} jobs/s (${seconds.toFixed(1)} s); ` +
      `${(total / n).toFixed(2)} DynamoDB calls a job (${byOperation}); ${refused} refused writes`,
  );
}

const N = Number(process.env.BENCH_JOBS ?? 1000);
console.log(`${N} jobs, ${WORKERS} workers claiming and completing at once (DynamoDB Local)`);
// A first small run warms the code paths and DynamoDB Local up; its figures are not printed.
await bench('warm-up', 100, 1, 'http', false);
await bench('HTTP, batch_size 1', N, 1, 'http');
await bench('HTTP, batch_size 10', N, 10, 'http');
await bench('in process (factory), batch 1', N, 1, 'engine');
await bench('in process (factory), batch 10', N, 10, 'engine');

await dynamo.stop();
process.exit(0);
