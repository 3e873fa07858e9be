/**
 * The dashboards and the activity log on one organization at 100 and at 5,000 tasks: the DynamoDB calls
 * and items each request reads (counted by a middleware on the real client, as bench/pipelines.ts
 * counts writes), and the time per request (median over 20, in process on DynamoDB Local). The figures
 * must not grow with the tasks: every answer comes from counters kept on write, key ranges of their
 * own and lists the tier bounds (10 agents here). Prints the figures; asserts nothing.
 *
 * Tasks are seeded through the domain's createTask (the HTTP route would stop at 30 creations a
 * minute), in every status, most assigned to one of the 10 agents; each writes its activity entry.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-dashboards');

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
      const output = result.output as { Items?: unknown[]; Item?: unknown; Responses?: Record<string, unknown[]> };
      itemsRead += output.Items?.length ?? output.Responses?.[TABLE]?.length ?? (output.Item ? 1 : 0);
    }
    return result;
  },
  { step: 'initialize', name: 'countCalls' },
);

const { call } = await import('#tests/support/identity');
const { seedAgent } = await import('#tests/support/agents');
const { handler: dashboard } = await import('#functions/http/dashboard');
const { handler: activityLog } = await import('#functions/http/activity-log');
const { benchOwner, taskSeeder } = await import('#bench/support/seeding');
type GroupHandler = import('#lib/http/group-handler').GroupHandler;

const { owner, ctx } = await benchOwner();
const AGENTS = 10;
for (let index = 0; index < AGENTS; index += 1) await seedAgent(owner.orgId, { name: `agent-${index}` });

const STATUSES = ['todo', 'in_progress', 'done', 'blocked', 'review'] as const;
// One task in 11 has no assignee; the others go round the agents.
const seedTo = taskSeeder(ctx, (index) => ({
  title: `Bench task ${index}`,
  status: STATUSES[index % STATUSES.length],
  assignee: index % (AGENTS + 1) === AGENTS ? null : `agent-${index % (AGENTS + 1)}`,
}));

async function measure(handler: GroupHandler, path: string, query: Record<string, string> = {}): Promise<void> {
  calls.clear();
  itemsRead = 0;
  counting = true;
  const first = await call(handler, 'GET', path, { token: owner.token, query });
  counting = false;
  if (first.status !== 200) throw new Error(`${path}: ${first.status} ${JSON.stringify(first.body)}`);
  const times: number[] = [];
  for (let run = 0; run < 20; run++) {
    const started = performance.now();
    await call(handler, 'GET', path, { token: owner.token, query });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const callList = [...calls.entries()].map(([name, n]) => `${n} ${name}`).join(', ');
  const total = [...calls.values()].reduce((sum, n) => sum + n, 0);
  const label = `${path}${Object.keys(query).length > 0 ? `?${new URLSearchParams(query)}` : ''}`;
  console.log(
    `  ${label.padEnd(44)} ${String(total).padStart(2)} calls (${callList}), ${String(itemsRead).padStart(4)} items; ` +
      `median ${times[10]?.toFixed(1)} ms`,
  );
}

console.log(`${AGENTS} agents; calls include authentication (1 GetItem) and the rate-limit counter (1 UpdateItem)`);
for (const size of [100, 5000]) {
  await seedTo(size);
  console.log(`an organization with ${size} tasks (and ${size} task.created activity entries):`);
  await measure(dashboard, '/dashboard');
  await measure(dashboard, '/dashboard/stats');
  await measure(dashboard, '/dashboard/overview');
  await measure(dashboard, '/dashboard/agent-efficiency');
  await measure(dashboard, '/dashboard/agent-queue-health');
  await measure(activityLog, '/activity-log');
  await measure(activityLog, '/activity-log', { actor_type: 'user' });
  await measure(activityLog, '/activity-log', { action: 'task.created', limit: '20' });
  await measure(activityLog, '/activity-log', { actor_id: `user:${owner.id}`, offset: '100', limit: '20' });
  await measure(activityLog, '/activity-log/stats');
}
await dynamo.stop();
process.exit(0);
