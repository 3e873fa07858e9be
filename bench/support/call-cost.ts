import { dynamo } from '#lib/db/client';

/**
 * What one request costs in DynamoDB, counted on the service's own client by a middleware: every call
 * with its command, the capacity DynamoDB says it consumed (the middleware asks each call for
 * `ReturnConsumedCapacity: TOTAL`), and when it started and ended, from which the round trips on the
 * critical path follow: the longest chain of calls each sent after the one before it answered. Calls
 * in flight side by side count once. Import it after benchTable(), as the service's modules.
 *
 * @example
 * const dynamo = await benchTable('bench-cost');
 * const { costOf } = await import('#bench/support/call-cost');
 * const cost = await costOf(() => invoke(tasks, 'GET', '/tasks/1', { token }));
 * console.log(cost.summary, cost.roundTrips, cost.capacity);
 */

interface Call {
  name: string;
  started: number;
  ended: number;
  read: number;
  write: number;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
let recording: Call[] | undefined;

dynamo.middlewareStack.add(
  (next, context) => async (args) => {
    const calls = recording;
    if (!calls) return next(args);
    const name = (context.commandName as string).replace('Command', '');
    (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
    const started = performance.now();
    const result = await next(args);
    const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
    const units = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
      (sum: number, entry: { CapacityUnits?: number }) => sum + (entry.CapacityUnits ?? 0),
      0,
    );
    const read = READS.has(name);
    calls.push({ name, started, ended: performance.now(), read: read ? units : 0, write: read ? 0 : units });
    return result;
  },
  { step: 'initialize', name: 'callCost' },
);

export interface Cost<T> {
  result: T;
  /** Calls by command, in the order first made: `1 BatchGetItem, 1 UpdateItem`. */
  summary: string;
  calls: number;
  roundTrips: number;
  scans: number;
  /** Read and write capacity units DynamoDB reports (transactions count double, as billed). */
  rcu: number;
  wcu: number;
}

/** Runs `work` once and answers what its DynamoDB calls cost. */
export async function costOf<T>(work: () => Promise<T>): Promise<Cost<T>> {
  const calls: Call[] = [];
  recording = calls;
  let result: T;
  try {
    result = await work();
  } finally {
    recording = undefined;
  }
  const byName = new Map<string, number>();
  for (const call of calls) byName.set(call.name, (byName.get(call.name) ?? 0) + 1);
  return {
    result,
    summary: [...byName.entries()].map(([name, n]) => `${n} ${name}`).join(', ') || 'none',
    calls: calls.length,
    roundTrips: criticalPath(calls),
    scans: byName.get('Scan') ?? 0,
    rcu: round(calls.reduce((sum, call) => sum + call.read, 0)),
    wcu: round(calls.reduce((sum, call) => sum + call.write, 0)),
  };
}

/** The longest chain of calls in which each was sent after the one before it had answered. */
function criticalPath(calls: Call[]): number {
  const sorted = [...calls].sort((a, b) => a.started - b.started);
  const depth = new Map<Call, number>();
  for (const call of sorted) {
    let before = 0;
    for (const other of sorted) {
      if (other.ended <= call.started) before = Math.max(before, depth.get(other) ?? 0);
    }
    depth.set(call, before + 1);
  }
  return Math.max(0, ...depth.values());
}

const round = (value: number) => Math.round(value * 100) / 100;

/**
 * `runs` runs of `work`, one after another: the median time in ms with the fastest and slowest beside it
 * (`3.1 (2.8–4.0)`), and this process's CPU time per run in ms (DynamoDB Local runs in a process of its
 * own, so that is the service's CPU: middleware, SDK, domain).
 */
export async function timeOf(work: () => Promise<unknown>, runs = 30): Promise<{ time: string; cpu: string }> {
  const times: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuBefore);
  times.sort((a, b) => a - b);
  const median = times[Math.floor(runs / 2)] as number;
  return {
    time: `${median.toFixed(1)} (${(times[0] as number).toFixed(1)}–${(times.at(-1) as number).toFixed(1)})`,
    cpu: ((cpu.user + cpu.system) / 1000 / runs).toFixed(2),
  };
}
