/**
 * What one request of each main endpoint costs in DynamoDB, in process on DynamoDB Local through the
 * real functions (authentication and rate limit included): the calls by command, the round trips on
 * the critical path (calls in flight side by side count once), the capacity DynamoDB reports
 * (ReturnConsumedCapacity TOTAL), Scans, and calls to the key service; beside the least the data
 * model allows for the same answer, with the guarantees kept (see MINIMUM). Then the time in process,
 * median (min–max) over repeated runs: the machine is shared, so the counts are the figures to compare.
 *
 * Last, GET /tasks/{id} after 100 and after 10,000 requests made with an API key (REQUESTS_WITH_KEY):
 * each leaves a usage record, which must not weigh on the requests that follow.
 *
 *   npm run bench -- request-cost
 *
 * Prints the figures; asserts nothing.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-request-cost');

const { costOf, timeOf } = await import('#bench/support/call-cost');
const { context, httpEvent } = await import('#tests/support/events');
const { call, newUser } = await import('#tests/support/identity');
const { seedAgent } = await import('#tests/support/agents');
const { memoryQueue } = await import('#lib/adapters/local/memory-queue');
const { ledgerWrites } = await import('#lib/tokens/ledger');
const { transact } = await import('#lib/db/transactions');
const { createTask } = await import('#lib/tasks/task-create');
const { wirePorts } = await import('#lib/app/ports');
const { requestContext } = await import('#lib/kernel/context');
const { fixedClock } = await import('#lib/kernel/clock');
const { groupHandler } = await import('#lib/http/group-handler');
type GroupHandler = import('#lib/http/group-handler').GroupHandler;
type KeyManagement = import('#lib/kernel/ports').KeyManagement;

const REQUESTS_WITH_KEY = Number(process.env.REQUESTS_WITH_KEY ?? 10_000);

// Every function that a main endpoint is served by, built with a key service that counts its calls
// (none of them wires one: a call would fail) and a queue that keeps its messages.
let kmsCalls = 0;
const keys: KeyManagement = {
  generateDataKey: async () => {
    kmsCalls += 1;
    throw new Error('no key service in this bench');
  },
  decryptDataKey: async () => {
    kmsCalls += 1;
    throw new Error('no key service in this bench');
  },
};
const queue = memoryQueue({ consumers: {}, holdUntilConnected: true });
// A clock the bench moves, so that 10,000 requests with one key stay within the minute's limit.
const clock = fixedClock(new Date());
const ports = { keys, queue, clock };
const handlers = {
  service: (await import('#functions/http/service')).serviceHandler({ ports }),
  auth: (await import('#functions/http/auth')).authHandler({ ports }),
  tasks: (await import('#functions/http/tasks')).tasksHandler({ ports }),
  agents: (await import('#functions/http/agents')).agentsHandler({ ports }),
  pipelines: (await import('#functions/http/agent-pipelines')).agentPipelinesHandler({ ports }),
  tokens: (await import('#functions/http/tokens')).handler,
  taskQueue: (await import('#functions/http/task-queue')).taskQueueHandler({ ports }),
  dashboard: (await import('#functions/http/dashboard')).dashboardHandler({ ports }),
  apiKeys: groupHandler('api-keys', (await import('#functions/http/api-keys')).bindings, { ports }),
};

/** A request straight to the handler, without the tests' contract and leak checks (their CPU is not the service's). */
async function invoke(
  handler: GroupHandler,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; query?: Record<string, string> } = {},
): Promise<number> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const event = httpEvent(method, `/api${path}`, {
    headers,
    ...(options.query ? { query: options.query } : {}),
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const response = await handler(event, context());
  return (response as { statusCode?: number }).statusCode ?? 200;
}

// Data: an instance admin first (the first user), then the organization measured.
await newUser('admin');
const owner = await newUser('bench');
const token = owner.token;
await transact(
  ledgerWrites({
    orgId: owner.orgId,
    type: 'admin_grant',
    amount: 100_000_000,
    action: 'bench',
    actor: 'system',
    now: new Date(),
  }).writes,
);
const created = await call(handlers.apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
  token,
  body: { name: 'bench', scopes: ['write'] },
});
const apiKey = created.body.data.key as string;
const keyId = created.body.data.id as string;

const plain = await call(handlers.tasks, 'POST', '/tasks', { token, body: { title: 'A task on its own' } });
const upstream = await call(handlers.tasks, 'POST', '/tasks', { token, body: { title: 'Upstream work' } });
const linked = await call(handlers.tasks, 'POST', '/tasks', {
  token,
  body: { title: 'Downstream work', depends_on: [upstream.body.data.id] },
});
// More tasks through the domain (the route takes 30 a minute), so that a page of the list is full.
const ctx = requestContext({
  traceId: 'bench',
  ports: wirePorts({ queue }),
  principal: {
    method: 'jwt',
    orgId: owner.orgId,
    capability: 'admin',
    userId: owner.id,
    isInstanceAdmin: false,
    scopes: [],
    organization: { id: owner.orgId, name: 'bench', slug: 'bench' },
  },
});
for (let index = 0; index < 60; index += 1) await createTask(ctx, { title: `Filler task ${index}` });
for (let index = 0; index < 5; index += 1) await seedAgent(owner.orgId, { name: `bench-agent-${index}` });
const pipeline = await call(handlers.pipelines, 'POST', '/agent-pipelines', {
  token,
  body: {
    name: 'bench',
    stages: [
      { name: 'plan', agent: 'qa-tester', depends_on: [], config: { prompt: 'Plan', max_tokens: 100 } },
      { name: 'build', agent: 'qa-tester', depends_on: ['plan'], config: { prompt: 'Build', max_tokens: 100 } },
    ],
  },
});
for (const status of [plain.status, upstream.status, linked.status, pipeline.status]) {
  if (status !== 201) throw new Error(`seeding failed with ${status}`);
}
const submitJob = () =>
  invoke(handlers.taskQueue, 'POST', '/task-queue/submit', {
    token,
    body: { task_type: 'bench', queue_name: 'bench', payload: {} },
  });
for (let index = 0; index < 40; index += 1) await submitJob();

interface Endpoint {
  label: string;
  /** What the data model needs at least, with the guarantees kept: calls / round trips, and why. */
  minimum: string;
  run: () => Promise<number>;
  /** Requests that leave a record, timed fewer times (creation has its own limit of 30 a minute). */
  runs?: number;
}

const get =
  (handler: GroupHandler, path: string, credential = token, query?: Record<string, string>) =>
  () =>
    invoke(handler, 'GET', path, { token: credential, ...(query ? { query } : {}) });

const endpoints: Endpoint[] = [
  { label: 'GET /health', minimum: '1 / 1: the table probe', run: get(handlers.service, '/health', '') },
  {
    label: 'GET /auth/me (JWT)',
    minimum: '2 / 2: credential batch (revocations, user, membership, org); rate-limit write',
    run: get(handlers.auth, '/auth/me'),
  },
  {
    label: 'GET /auth/me (API key)',
    minimum: '3 / 2: key and org batch (the key names its org); rate-limit write ‖ usage record',
    run: get(handlers.auth, '/auth/me', apiKey),
  },
  {
    label: 'GET /tasks/{id} (JWT)',
    minimum: '2 / 2: credential batch with the task; rate-limit write',
    run: get(handlers.tasks, `/tasks/${plain.body.data.id}`),
  },
  {
    label: 'GET /tasks/{id} (API key)',
    minimum: '3 / 2: key, org and task batch; rate-limit write ‖ usage record',
    run: get(handlers.tasks, `/tasks/${plain.body.data.id}`, apiKey),
  },
  {
    label: 'GET /tasks/{id} with a dependency (JWT)',
    minimum: '3 / 2: as above; related tasks’ titles and states ‖ rate-limit write',
    run: get(handlers.tasks, `/tasks/${linked.body.data.id}`),
  },
  {
    label: 'GET /tasks?limit=50 (JWT)',
    minimum: '4 / 2: credential batch; rate-limit write ‖ page Query ‖ count item',
    run: get(handlers.tasks, '/tasks', token, { limit: '50' }),
  },
  {
    label: 'POST /tasks (JWT)',
    minimum: '5 / 5: credential batch; rate-limit write; id counter; postings; one transaction',
    run: () => invoke(handlers.tasks, 'POST', '/tasks', { token, body: { title: `Measured ${Math.random()}` } }),
    runs: 20,
  },
  {
    label: 'GET /agents (JWT)',
    minimum: '4 / 2: credential batch; rate-limit write ‖ agents Query ‖ automations Query',
    run: get(handlers.agents, '/agents'),
  },
  {
    label: 'POST /agent-pipelines/{id}/execute (JWT)',
    minimum: '5 / 4: credential batch; rate-limit write ‖ pipeline and balance; id counter; transaction',
    run: () =>
      invoke(handlers.pipelines, 'POST', `/agent-pipelines/${pipeline.body.data.id}/execute`, {
        token,
        body: { inputs: {} },
      }),
    runs: 20,
  },
  {
    label: 'POST /tokens/consume (JWT)',
    minimum: '4 / 3: credential batch; rate-limit write ‖ balance and top-up settings; transaction',
    run: () => invoke(handlers.tokens, 'POST', '/tokens/consume', { token, body: { amount: 1, action: 'bench' } }),
  },
  {
    label: 'POST /task-queue/claim (JWT)',
    minimum: '4 / 3: credential batch; rate-limit write ‖ claimable Query; claim transaction',
    run: () =>
      invoke(handlers.taskQueue, 'POST', '/task-queue/claim', {
        token,
        body: { worker_id: 'bench-worker', queue_name: 'bench' },
      }),
    runs: 20,
  },
  {
    label: 'GET /dashboard/overview (JWT)',
    minimum: '— / 2: credential batch; rate-limit write ‖ balance, runs, protocols, 7 days of counters',
    run: get(handlers.dashboard, '/dashboard/overview'),
  },
];

const rows: string[][] = [];
for (const endpoint of endpoints) {
  await endpoint.run(); // warm-up: the code paths and the connection
  kmsCalls = 0;
  const cost = await costOf(endpoint.run);
  const kms = kmsCalls;
  const time = await timeOf(endpoint.run, endpoint.runs ?? 30);
  rows.push([
    endpoint.label,
    String(cost.result),
    String(cost.calls),
    String(cost.roundTrips),
    cost.summary,
    `${cost.rcu} / ${cost.wcu}`,
    String(cost.scans),
    String(kms),
    endpoint.minimum,
    time.time,
    time.cpu,
  ]);
}
printTable(
  [
    'endpoint',
    'status',
    'calls',
    'round trips',
    'calls by command',
    'RCU / WCU',
    'Scans',
    'KMS',
    'minimum (calls / round trips)',
    'ms median (min–max)',
    'CPU ms',
  ],
  rows,
);

// Usage records pile up with every request made with an API key; the requests that follow must not pay.
const taskPath = `/tasks/${plain.body.data.id}`;
const withKey = get(handlers.tasks, taskPath, apiKey);
const growth: string[][] = [];
let made = 0;
for (const target of [100, REQUESTS_WITH_KEY]) {
  for (; made < target; made += 16) {
    await Promise.all(Array.from({ length: 16 }, withKey));
    clock.advance(1000); // 960 a minute, far below the enterprise tier's 10,000
  }
  clock.advance(60_000);
  const cost = await costOf(withKey);
  const jwt = await costOf(get(handlers.tasks, taskPath));
  const usage = await costOf(get(handlers.apiKeys, `/organizations/${owner.orgId}/api-keys/${keyId}/usage`));
  growth.push([
    String(made),
    `${cost.result}: ${cost.calls} calls, ${cost.rcu} / ${cost.wcu}`,
    (await timeOf(withKey)).time,
    `${jwt.result}: ${jwt.calls} calls, ${jwt.rcu} / ${jwt.wcu}`,
    (await timeOf(get(handlers.tasks, taskPath))).time,
    `${usage.result}: ${usage.calls} calls, ${usage.rcu} RCU`,
  ]);
}
console.log('');
printTable(
  [
    'requests made with the key',
    'GET /tasks/{id} with the key: status, cost (RCU / WCU)',
    'ms median (min–max)',
    'same with a JWT',
    'ms median (min–max)',
    'usage list (first page)',
  ],
  growth,
);

function printTable(header: string[], body: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((row) => row[column]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of body) console.log(line(row));
}

queue.close?.();
await dynamo.stop();
process.exit(0);
