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

const { countCalls, timeRuns } = await import('#bench/support/measure');
const { benchOwner, common, rare, sentence, taskSeeder } = await import('#bench/support/seeding');
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

async function measure(label: string, query: Record<string, string>): Promise<void> {
  const request = () => call(tasks, 'GET', '/tasks', { token: owner.token, query });
  const counted = await countCalls(request);
  const first = counted.result;
  const timing = await timeRuns(request);
  console.log(
    `  ${label.padEnd(38)} status ${first.status}, total ${String(first.body.meta?.total).padStart(4)}; ` +
      `${counted.summary}, ${counted.itemsRead} items read; ${timing.summary}`,
  );
}

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
