/**
 * GET /search?q=… on one organization as it grows from 100 to 5,000 tasks (with 30 products, agents,
 * templates and pipelines beside them): the DynamoDB calls one search request makes (counted by a
 * middleware on the real client, by command) and the items they read, and the time per request (median
 * and p90 over 30 requests, in process on DynamoDB Local). The calls must not grow with the data.
 * Prints the figures; asserts nothing.
 *
 * Records are seeded through the domain's create functions (the HTTP route would stop task creation
 * at 30 a minute), with names drawn from a fixed vocabulary so that every run is the same.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-global-search');

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
const { handler: search } = await import('#functions/http/search');
const { createTask } = await import('#lib/tasks/task-create');
const { createProduct } = await import('#lib/products/product-create');
const { createAgent } = await import('#lib/agents/agent-create');
const { createTemplate } = await import('#lib/templates/template-create');
const { createPipeline } = await import('#lib/pipelines/pipeline-writes');
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

const common = vocabulary[3] as string;
const rare = vocabulary[1500] as string;

// The other types: 30 of each, every one holding the common word and a few drawn ones.
for (let index = 0; index < 30; index += 1) {
  await createProduct(ctx, { name: `${common} ${sentence(2)} ${index}`, description: sentence(12) });
  await createAgent(ctx, { name: `agent-${index}`, display_name: `${common} ${sentence(2)}`, role: sentence(3) });
  await createTemplate(ctx, { name: `${common} ${sentence(2)}`, slug: `template-${index}`, description: sentence(12) });
  await createPipeline(ctx, {
    name: `${common} ${sentence(2)} ${index}`,
    description: sentence(12),
    stages: [{ name: 'build', agent: 'qa-tester', depends_on: [], config: {} }],
  });
}

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
  const first = await call(search, 'GET', '/search', { token: owner.token, query });
  counting = false;
  if (first.status !== 200) throw new Error(`search failed: ${JSON.stringify(first.body)}`);
  const times: number[] = [];
  for (let run = 0; run < 30; run++) {
    const started = performance.now();
    await call(search, 'GET', '/search', { token: owner.token, query });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const groups = first.body.data.groups as Record<string, { items: unknown[]; more: boolean }>;
  const shown = Object.entries(groups)
    .map(([type, group]) => `${type} ${group.items.length}${group.more ? '+' : ''}`)
    .join(' ');
  const callList = [...calls.entries()].map(([name, n]) => `${n} ${name}`).join(', ');
  const total = [...calls.values()].reduce((sum, n) => sum + n, 0);
  console.log(
    `  ${label.padEnd(30)} ${total} calls (${callList}), ${String(itemsRead).padStart(5)} items read; ` +
      `${shown}; median ${times[15]?.toFixed(1)} ms, p90 ${times[27]?.toFixed(1)} ms`,
  );
}

for (const size of [100, 5000]) {
  await seedTo(size);
  console.log(
    `GET /search on an organization with ${size} tasks and 30 products, agents, templates and pipelines ` +
      '(calls include the authentication read and the rate-limit counter):',
  );
  await measure(`q=${rare} (a rare word)`, { q: rare });
  await measure(`q=${common} (a common word)`, { q: common });
  await measure(`q=${common.slice(0, 2)} (a 2-letter prefix)`, { q: common.slice(0, 2) });
  await measure(`q=${common} ${rare} (two words)`, { q: `${common} ${rare}` });
  for (const type of ['tasks', 'products', 'agents', 'templates', 'pipelines']) {
    await measure(`q=${common}&types=${type}`, { q: common, types: type });
  }
}
await dynamo.stop();
process.exit(0);
