/**
 * GET /tasks?q=… on one organization as it grows to 1,000 and 5,000 tasks: the DynamoDB calls and
 * items each search reads (counted by a middleware on the real client), and the time per request
 * (median and p90 over 30 requests, in process on DynamoDB Local). For comparison, the same figures
 * for an unfiltered page, a status-filtered page, `next`, and one assignee's tasks (20 assignees share
 * the work). Prints the figures; asserts nothing.
 *
 * Tasks are seeded through the domain's createTask (the HTTP route would stop at 30 creations a
 * minute), with titles and descriptions drawn from a fixed vocabulary so that every run is the same.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-search');

const { dynamo: client, TABLE } = await import('#lib/db/client');
const calls = new Map<string, number>();
let itemsRead = 0;
let counting = false;
client.middlewareStack.add(
  (next, context) => async (args) => {
    const result = await next(args);
    if (counting) {
      const name = (context.commandName as string).replace('Command', '');
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const output = result.output as { Items?: unknown[]; Responses?: Record<string, unknown[]> };
      itemsRead += output.Items?.length ?? output.Responses?.[TABLE]?.length ?? 0;
    }
    return result;
  },
  { step: 'initialize', name: 'countCalls' },
);

const { call, newUser } = await import('#tests/support/identity');
const { handler: tasks } = await import('#functions/http/tasks');
const { createTask } = await import('#lib/tasks/task-create');
const { systemClock } = await import('#lib/kernel/clock');
const { wirePorts } = await import('#lib/app/ports');
const { requestContext } = await import('#lib/kernel/context');
const { memoryQueue } = await import('#lib/adapters/local/memory-queue');
const queue = memoryQueue({ consumers: {}, holdUntilConnected: true });

const owner = await newUser('bench');
const ctx = requestContext({
  traceId: 'bench',
  ports: wirePorts({ clock: systemClock, queue, email: { send: async () => undefined } }),
  baseUrl: 'http://localhost',
  principal: {
    method: 'jwt' as const,
    orgId: owner.orgId,
    capability: 'admin' as const,
    userId: owner.id,
    isInstanceAdmin: false,
    scopes: [],
    organization: { id: owner.orgId, name: 'bench', slug: 'bench' },
  },
});

/** A deterministic vocabulary: 2,000 made-up words, drawn with a skew so that some are common. */
let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const syllables = ['ka', 'lo', 'mi', 'ten', 'sor', 'vi', 'dra', 'pel', 'qu', 'ix', 'ru', 'zen', 'bo', 'fa'];
const vocabulary = Array.from({ length: 2000 }, (_, index) => {
  let word = '';
  for (let n = index + 1; n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length];
  return word;
});
const pickWord = () => vocabulary[Math.floor(vocabulary.length * random() ** 2)] as string;
const sentence = (length: number) => Array.from({ length }, pickWord).join(' ');

let seeded = 0;
async function seedTo(count: number): Promise<void> {
  const started = performance.now();
  const from = seeded;
  while (seeded < count) {
    const batch = Array.from({ length: Math.min(8, count - seeded) }, (_, offset) => seeded + offset);
    seeded += batch.length;
    await Promise.all(
      batch.map((index) =>
        createTask(ctx, {
          title: `${sentence(4)} ${index}`,
          description: sentence(25),
          status: index % 3 === 0 ? 'in_progress' : 'todo',
          // 20 agents share the work: each holds 5% of the tasks.
          assignee: `agent-${index % 20}`,
        }),
      ),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`seeded ${count - from} tasks in ${seconds.toFixed(1)} s (${((count - from) / seconds).toFixed(0)}/s)`);
}

async function measure(label: string, query: Record<string, string>): Promise<void> {
  calls.clear();
  itemsRead = 0;
  counting = true;
  const first = await call(tasks, 'GET', '/tasks', { token: owner.token, query });
  counting = false;
  const times: number[] = [];
  for (let run = 0; run < 30; run++) {
    const started = performance.now();
    await call(tasks, 'GET', '/tasks', { token: owner.token, query });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const callList = [...calls.entries()].map(([name, n]) => `${n} ${name}`).join(', ');
  const total = [...calls.values()].reduce((sum, n) => sum + n, 0);
  console.log(
    `  ${label.padEnd(38)} status ${first.status}, total ${String(first.body.meta?.total).padStart(4)}; ` +
      `${total} calls (${callList}), ${itemsRead} items read; ` +
      `median ${times[15]?.toFixed(1)} ms, p90 ${times[27]?.toFixed(1)} ms`,
  );
}

const common = vocabulary[3] as string;
const rare = vocabulary[1500] as string;
for (const size of [1000, 5000]) {
  await seedTo(size);
  console.log(`GET /tasks on an organization with ${size} tasks (calls include auth and the rate-limit counter):`);
  await measure(`q=${rare} (a rare word)`, { q: rare });
  await measure(`q=${common} (a common word)`, { q: common });
  await measure(`q=${common.slice(0, 2)} (a 2-letter prefix)`, { q: common.slice(0, 2) });
  await measure(`q=${common} ${rare} (two words)`, { q: `${common} ${rare}` });
  await measure('no filter (first page of 50)', {});
  await measure('status=in_progress', { status: 'in_progress' });
  await measure('next=true', { next: 'true' });
  await measure('assignee=agent-7 (5% of the tasks)', { assignee: 'agent-7' });
  await measure('assignee=agent-7&status=in_progress', { assignee: 'agent-7', status: 'in_progress' });
  await measure('next=true&assignee=agent-7', { next: 'true', assignee: 'agent-7' });
}
await dynamo.stop();
process.exit(0);
