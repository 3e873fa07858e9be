/**
 * GET /search?q=… on one organization as it grows to 1,000 and 5,000 tasks (with 30 products, agents,
 * templates and pipelines beside them): the DynamoDB calls one search request makes (counted by a
 * middleware on the real client, by command) and the items they read (a Query's scanned items, a
 * BatchGetItem's answered ones), and the time per request (min, median, p90 and max over 30 requests, in
 * process on DynamoDB Local). The calls must not grow with the data. GET /search has no pages: `limit`
 * (5 by default, at most 20) is the size of each group. Prints the figures; asserts nothing.
 *
 *   npm run bench -- global-search
 *
 * Records are seeded through the domain's create functions (the HTTP route would stop task creation
 * at 30 a minute), with names drawn from a fixed vocabulary so that every run is the same.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-global-search');

const { countCalls, timeRuns } = await import('#bench/support/measure');
const { benchOwner, common, rare, sentence, taskSeeder } = await import('#bench/support/seeding');
const { call } = await import('#tests/support/identity');
const { handler: search } = await import('#functions/http/search');
const { createProduct } = await import('#lib/products/product-create');
const { createAgent } = await import('#lib/agents/agent-create');
const { createTemplate } = await import('#lib/templates/template-create');
const { createPipeline } = await import('#lib/pipelines/pipeline-writes');

const { owner, ctx } = await benchOwner();

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

const seedTo = taskSeeder(ctx, (index) => ({
  title: `${sentence(4)} ${index}`,
  description: sentence(25),
  assignee: `agent-${index % 20}`,
}));

async function measure(label: string, query: Record<string, string>): Promise<void> {
  const request = () => call(search, 'GET', '/search', { token: owner.token, query });
  const counted = await countCalls(request);
  const first = counted.result;
  if (first.status !== 200) throw new Error(`search failed: ${JSON.stringify(first.body)}`);
  const timing = await timeRuns(request);
  const groups = first.body.data.groups as Record<string, { items: unknown[]; more: boolean }>;
  const shown = Object.entries(groups)
    .map(([type, group]) => `${type} ${group.items.length}${group.more ? '+' : ''}`)
    .join(' ');
  console.log(
    `  ${label.padEnd(30)} ${counted.summary}, ${String(counted.itemsRead).padStart(5)} items read; ` +
      `${shown}; ${timing.summary}`,
  );
}

for (const size of [1000, 5000]) {
  await seedTo(size);
  console.log(
    `GET /search on an organization with ${size} tasks and 30 products, agents, templates and pipelines ` +
      '(calls include the authentication read and the rate-limit counter):',
  );
  await measure(`q=${rare} (a rare word)`, { q: rare });
  await measure(`q=${common} (a common word)`, { q: common });
  await measure(`q=${common}&limit=20`, { q: common, limit: '20' });
  await measure(`q=${common.slice(0, 2)} (a 2-letter prefix)`, { q: common.slice(0, 2) });
  await measure(`q=${common} ${rare} (two words)`, { q: `${common} ${rare}` });
  for (const type of ['tasks', 'products', 'agents', 'templates', 'pipelines']) {
    await measure(`q=${common}&types=${type}`, { q: common, types: type });
  }
}
await dynamo.stop();
process.exit(0);
