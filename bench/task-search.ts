/**
 * GET /tasks?q=… on one organization as it grows to 1,000 and 5,000 tasks: for the first page and a later
 * one, the DynamoDB calls a search makes and the items they read (counted by a middleware on the real
 * client: a Query's scanned items, a BatchGetItem's answered ones), the `total` it answers (`~` where
 * `meta.total_exact` is false), and the time per request (min, median, p90 and max over 30 requests, in
 * process on DynamoDB Local). For comparison, the same figures for an unfiltered page, a status-filtered
 * page, `next`, and one assignee's tasks (20 assignees share the work). Prints the figures; asserts nothing.
 *
 * Tasks are seeded through the domain's createTask (the HTTP route would stop at 30 creations a
 * minute), with titles and descriptions drawn from a fixed vocabulary so that every run is the same.
 *
 *   npm run bench -- task-search
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-search');

const { countCalls, timeRuns } = await import('#bench/support/measure');
const { benchOwner, common, rare, sentence, taskSeeder, vocabulary } = await import('#bench/support/seeding');
const { call } = await import('#tests/support/identity');
const { handler: tasks } = await import('#functions/http/tasks');

const { owner, ctx } = await benchOwner();

const seedTo = taskSeeder(ctx, (index) => ({
  title: `${sentence(4)} ${index}`,
  description: sentence(25),
  status: index % 3 === 0 ? 'in_progress' : 'todo',
  // 20 agents share the work: each holds 5% of the tasks.
  assignee: `agent-${index % 20}`,
}));

/** A word about a sixth of the tasks hold, nine in ten of them with `common` too. */
const second = vocabulary[20] as string;

async function measure(label: string, query: Record<string, string>): Promise<void> {
  const request = () => call(tasks, 'GET', '/tasks', { token: owner.token, query });
  const counted = await countCalls(request);
  const first = counted.result;
  if (first.status !== 200) throw new Error(`${label}: ${first.status} ${JSON.stringify(first.body)}`);
  const timing = await timeRuns(request);
  const meta = first.body.meta as { total: number; total_exact?: false };
  const total = `${meta.total_exact === false ? '~' : ''}${meta.total}`;
  const page = `${first.body.data.length} of ${total}`.padEnd(13);
  console.log(
    `  ${label.padEnd(44)} ${page} ${counted.summary.padEnd(58)} ${String(counted.itemsRead).padStart(6)} items; ` +
      timing.summary,
  );
}

/** The first page, and the page at `offset` (`offset=50`: the second). */
async function pages(label: string, query: Record<string, string>, offsets: number[] = [50]): Promise<void> {
  await measure(`${label}, first page`, query);
  for (const offset of offsets) await measure(`${label}, offset=${offset}`, { ...query, offset: String(offset) });
}

for (const size of [1000, 5000]) {
  await seedTo(size);
  console.log(
    `GET /tasks on an organization with ${size} tasks, 50 a page (calls include auth and the rate-limit counter):`,
  );
  console.log(`  ${'request'.padEnd(44)} ${'tasks'.padEnd(13)} ${'calls'.padEnd(58)} ${'read'.padStart(12)}; time`);
  await pages(`q=${rare} (a rare word)`, { q: rare });
  await pages(`q=${common} (a common word)`, { q: common }, [50, 1000]);
  await pages(`q=${common.slice(0, 2)} (a 2-letter prefix)`, { q: common.slice(0, 2) });
  await pages(`q=${common} ${rare} (two words)`, { q: `${common} ${rare}` });
  await pages(`q=${common} ${second} (two common words)`, { q: `${common} ${second}` });
  await pages(`q=${common}&status=in_progress`, { q: common, status: 'in_progress' });
  await measure('no filter (first page of 50)', {});
  await measure('status=in_progress', { status: 'in_progress' });
  await measure('next=true', { next: 'true' });
  await measure('assignee=agent-7 (5% of the tasks)', { assignee: 'agent-7' });
  await measure('assignee=agent-7&status=in_progress', { assignee: 'agent-7', status: 'in_progress' });
  await measure('next=true&assignee=agent-7', { next: 'true', assignee: 'agent-7' });
}
await dynamo.stop();
process.exit(0);
