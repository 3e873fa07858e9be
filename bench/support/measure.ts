import { dynamo, TABLE } from '#lib/db/client';

/**
 * What a benchmark measures of a request: the DynamoDB calls it makes (counted by a middleware on the
 * service's own client, by command) with the items they read, and its time over repeated runs. Import it
 * after benchTable(), as the service's modules.
 *
 * @example
 * const dynamo = await benchTable('bench-search');
 * const { countCalls, timeRuns } = await import('#bench/support/measure');
 * const counted = await countCalls(() => call(search, 'GET', '/search', { token, query }));
 * const timing = await timeRuns(() => call(search, 'GET', '/search', { token, query }));
 * console.log(`${counted.summary}, ${counted.itemsRead} items read; ${timing.summary}`);
 *
 * Items read: what each Query scanned (a COUNT or a filter reads items it does not send) and what each
 * BatchGetItem answered.
 */

const calls = new Map<string, number>();
let itemsRead = 0;
let counting = false;
dynamo.middlewareStack.add(
  (next, context) => async (args) => {
    const result = await next(args);
    if (counting) {
      const name = (context.commandName as string).replace('Command', '');
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const output = result.output as {
        Items?: unknown[];
        ScannedCount?: number;
        Responses?: Record<string, unknown[]>;
      };
      // A Query's items read are those it scanned: a COUNT or a filter reads items it does not send.
      itemsRead += output.ScannedCount ?? output.Items?.length ?? output.Responses?.[TABLE]?.length ?? 0;
    }
    return result;
  },
  { step: 'initialize', name: 'countCalls' },
);

/**
 * Runs `work` once, counting the DynamoDB calls it makes; its result, the calls by command, their total,
 * the items they read, and a summary (`3 calls (2 Query, 1 GetItem)`).
 */
export async function countCalls<T>(work: () => Promise<T>) {
  calls.clear();
  itemsRead = 0;
  counting = true;
  try {
    const result = await work();
    const total = [...calls.values()].reduce((sum, n) => sum + n, 0);
    const list = [...calls.entries()].map(([name, n]) => `${n} ${name}`).join(', ');
    return { result, calls: new Map(calls), total, itemsRead, summary: `${total} calls (${list})` };
  } finally {
    counting = false;
  }
}

/**
 * Runs `work` `runs` times, one after another; the min, median, 90th percentile and max of their times in
 * ms, and a summary (`median 3.1 ms, p90 4.0 ms (min 2.2, max 9.5)`): the machine's noise beside the median.
 */
export async function timeRuns(work: () => Promise<unknown>, runs = 30) {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(runs / 2)] as number;
  const p90 = times[Math.floor(runs * 0.9)] as number;
  const min = times[0] as number;
  const max = times[runs - 1] as number;
  const ms = (value: number) => value.toFixed(1);
  return {
    min,
    median,
    p90,
    max,
    summary: `median ${ms(median)} ms, p90 ${ms(p90)} ms (min ${ms(min)}, max ${ms(max)})`,
  };
}
