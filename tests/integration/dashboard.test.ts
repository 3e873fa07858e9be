import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler as activityLog } from '#functions/http/activity-log';
import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { agentsHandler } from '#functions/http/agents';
import { handler as apiKeys } from '#functions/http/api-keys';
import { handler as credentials } from '#functions/http/credentials';
import { handler as dashboard, dashboardHandler } from '#functions/http/dashboard';
import { handler as organizations } from '#functions/http/organizations';
import { handler as products } from '#functions/http/products';
import { tasksHandler } from '#functions/http/tasks';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { handler as tokens } from '#functions/http/tokens';
import { pipelineStageHandler } from '#functions/queue/pipeline-stage';
import { agentTickHandler } from '#functions/schedule/agent-tick';
import { type MemoryQueue, type MemoryQueueOptions, memoryQueue } from '#lib/adapters/local/memory-queue';
import { table } from '#lib/db/table';
import { AgentRunError } from '#lib/errors';
import { fixedClock } from '#lib/kernel/clock';
import type { AgentRunner, MessageQueue } from '#lib/kernel/ports';
import { taskKeys } from '#lib/tasks/task-keys';
import { seedAgent } from '#tests/support/agents';
import { type CallOptions, type CallResult, call, newUser, type TestUser } from '#tests/support/identity';
import { recordingScheduler } from '#tests/support/scheduler';

/**
 * The dashboards (`/dashboard…`) against DynamoDB Local: the instance's totals without a credential
 * (and nothing of any organization), the organization's counts, overview, agent efficiency and queue
 * health, each checked against the records it counts, under concurrent changes too.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; every other user is an ordinary one.
  await newUser('instanceadmin');
});

const queues: MemoryQueue[] = [];
afterEach(() => {
  for (const queue of queues.splice(0)) queue.close();
});

/** An in-process queue whose stage consumer runs `runner`; webhook deliveries are dropped. */
function engine(runner: AgentRunner) {
  const consumers: MemoryQueueOptions['consumers'] = { 'webhook-delivery': async () => ({ batchItemFailures: [] }) };
  const memory = memoryQueue({ consumers, visibilityTimeoutSeconds: 0.05 });
  queues.push(memory);
  const queue: MessageQueue = memory;
  consumers['pipeline-stage'] = pipelineStageHandler({ ports: { queue, runner }, retryDelaysSeconds: [0.01, 0.01] });
  return {
    queue: memory,
    tasks: tasksHandler({ ports: { queue } }),
    pipelines: agentPipelinesHandler({ ports: { queue } }),
    tenantConfig: tenantConfigHandler({ ports: { queue } }),
    tick: (clock?: ReturnType<typeof fixedClock>) => agentTickHandler({ runner, queue, ...(clock ? { clock } : {}) }),
  };
}

/** Answers 100 tokens a run (the stage's or task's), fails runs whose input says `[fail]`, holds `[hold]` ones. */
function runner(options: { held?: Promise<void> } = {}): AgentRunner {
  return {
    kind: 'local',
    async run(request) {
      const text = JSON.stringify(request.input) + request.instructions;
      if (text.includes('[hold]')) await options.held;
      if (text.includes('[fail]')) throw new AgentRunError('asked to fail', { retryable: false });
      return {
        output: { summary: 'done' },
        usage: { input_tokens: 60, output_tokens: 40, total_tokens: 100 },
        model: 'test-model',
      };
    },
  };
}

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });
const ok = (response: CallResult) => {
  if (response.status >= 300) throw new Error(`${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data;
};
const get = async (user: TestUser, path: string) => ok(await call(dashboard, 'GET', path, as(user)));

type Engine = ReturnType<typeof engine>;

const agents = agentsHandler({ ports: { scheduler: recordingScheduler() } });
const quickPipeline = { name: 'Quick', stages: [{ name: 's', agent: 'qa-tester', config: { max_tokens: 200 } }] };

const adminKeys = new Map<string, string>();

/** An admin-scoped API key of the user's organization (DELETE /tasks needs the admin permission). */
async function adminKey(user: TestUser): Promise<string> {
  const known = adminKeys.get(user.orgId);
  if (known) return known;
  const body = { name: 'admin', scopes: ['admin'] };
  const key = ok(await call(apiKeys, 'POST', `/organizations/${user.orgId}/api-keys`, as(user, { body }))).key;
  adminKeys.set(user.orgId, key);
  return key as string;
}

async function createTask(api: Engine, user: TestUser, body: Record<string, unknown>): Promise<{ id: number }> {
  return ok(await call(api.tasks, 'POST', '/tasks', as(user, { body })));
}

const patchTask = (api: Engine, user: TestUser, id: number, body: Record<string, unknown>) =>
  call(api.tasks, 'PATCH', `/tasks/${id}`, as(user, { body }));

/** The task count of a status (`/tasks?status=`'s total: a Query of the status index, not a counter). */
async function recount(api: Engine, user: TestUser, query: Record<string, string>): Promise<number> {
  const response = await call(api.tasks, 'GET', '/tasks', as(user, { query: { ...query, limit: '0' } }));
  return response.body.meta.total;
}

const STATUSES = ['todo', 'in_progress', 'review', 'done', 'blocked', 'cancelled'] as const;

/** The queue's entries as stored: task id and queued time, oldest first. */
async function queueEntries(orgId: string, assignee: string) {
  const { Items = [] } = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :task)',
    ExpressionAttributeValues: { ':pk': taskKeys.queuePk(orgId, assignee), ':task': 'TASK#' },
    ConsistentRead: true,
  });
  return Items.map((item) => ({ id: Number(item.task_id), queuedAt: String(item.queued_at) }));
}

describe('GET /dashboard', () => {
  it('answers the instance’s totals without a credential, counting what organizations add', async () => {
    // Prepare
    const api = engine(runner());
    const before = (await call(dashboard, 'GET', '/dashboard')).body.data.totals;
    const user = await newUser('counted');
    ok(await call(agents, 'POST', '/agents', as(user, { body: { name: 'counted-agent' } })));
    await createTask(api, user, { title: 'One' });
    const two = await createTask(api, user, { title: 'Two' });
    await createTask(api, user, { title: 'Three' });
    ok(await call(api.tasks, 'DELETE', `/tasks/${two.id}`, { token: await adminKey(user) }));
    const pipeline = ok(await call(api.pipelines, 'POST', '/agent-pipelines', as(user, { body: quickPipeline })));
    ok(
      await call(api.pipelines, 'POST', `/agent-pipelines/${pipeline.id}/execute`, as(user, { body: { inputs: {} } })),
    );
    await api.queue.drain();
    const other = await newUser('deleted');
    const side = ok(await call(organizations, 'POST', '/organizations', as(other, { body: { name: 'Side' } })));
    ok(await call(organizations, 'DELETE', `/organizations/${side.id}`, as(other)));

    // Act
    const response = await call(dashboard, 'GET', '/dashboard');

    // Assess: two users' personal organizations (the side one is gone), one agent, two tasks, one execution.
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      generated_at: expect.any(String),
      totals: {
        organizations: before.organizations + 2,
        agents: before.agents + 1,
        tasks: before.tasks + 2,
        executions: before.executions + 1,
      },
      endpoints: [
        { path: '/dashboard/stats', summary: expect.any(String), auth: 'bearer' },
        { path: '/dashboard/overview', summary: expect.any(String), auth: 'bearer' },
        { path: '/dashboard/agent-efficiency', summary: expect.any(String), auth: 'bearer' },
        { path: '/dashboard/agent-queue-health', summary: expect.any(String), auth: 'bearer' },
      ],
    });
  });

  it('shows nothing of any organization: no id, name, title or per-organization number', async () => {
    // Prepare: an organization whose every name is distinctive.
    const api = engine(runner());
    const user = await newUser('zebracornowner');
    await call(products, 'POST', '/products', as(user, { body: { name: 'Quokkatron Deluxe' } }));
    await createTask(api, user, { title: 'Narwhal secret plan', assignee: 'narwhal-agent' });
    await seedAgent(user.orgId, { name: 'narwhal-agent', display_name: 'Axolotl Prime' });

    // Act
    const response = await call(dashboard, 'GET', '/dashboard');
    const withCredential = await call(dashboard, 'GET', '/dashboard', as(user));

    // Assess
    const text = JSON.stringify([response.body, withCredential.body]);
    for (const secret of [user.orgId, user.username, user.email, 'Quokkatron', 'Narwhal', 'narwhal', 'Axolotl']) {
      expect(text).not.toContain(secret);
    }
    expect(Object.keys(response.body.data)).toEqual(['generated_at', 'totals', 'endpoints']);
    expect(Object.keys(response.body.data.totals).sort()).toEqual(['agents', 'executions', 'organizations', 'tasks']);
    expect(withCredential.body.data.totals).toEqual(response.body.data.totals);
  });

  it('answers 401 on the organization’s dashboards without a credential', async () => {
    for (const path of ['/stats', '/overview', '/agent-efficiency', '/agent-queue-health']) {
      expect((await call(dashboard, 'GET', `/dashboard${path}`)).status).toBe(401);
    }
  });
});

describe('GET /dashboard/stats', () => {
  it('counts the organization’s tasks, agents, products, pipelines, executions, runs and tokens', async () => {
    // Prepare
    const api = engine(runner());
    const user = await newUser('stats');
    const a = await createTask(api, user, { title: 'A' });
    const b = await createTask(api, user, { title: 'B' });
    await createTask(api, user, { title: 'C', status: 'blocked' });
    ok(await patchTask(api, user, a.id, { status: 'in_progress' }));
    ok(await patchTask(api, user, a.id, { status: 'done' }));
    ok(await patchTask(api, user, b.id, { status: 'cancelled' }));
    await seedAgent(user.orgId, { name: 'idler' });
    await seedAgent(user.orgId, { name: 'halted', status: 'stopped' });
    await call(products, 'POST', '/products', as(user, { body: { name: 'Widget' } }));
    ok(await call(tokens, 'POST', '/tokens/consume', as(user, { body: { amount: 70, action: 'manual' } })));
    const stage = (name: string, prompt = 'go') => ({ name, agent: 'qa-tester', config: { prompt, max_tokens: 200 } });
    const good = ok(
      await call(api.pipelines, 'POST', '/agent-pipelines', as(user, { body: { name: 'Good', stages: [stage('s')] } })),
    );
    const bad = ok(
      await call(
        api.pipelines,
        'POST',
        '/agent-pipelines',
        as(user, { body: { name: 'Bad', stages: [stage('s', '[fail]')] } }),
      ),
    );
    ok(await call(api.pipelines, 'POST', `/agent-pipelines/${good.id}/execute`, as(user, { body: { inputs: {} } })));
    ok(await call(api.pipelines, 'POST', `/agent-pipelines/${bad.id}/execute`, as(user, { body: { inputs: {} } })));
    await api.queue.drain();

    // Act
    const stats = await get(user, '/dashboard/stats');

    // Assess: 70 consumed by hand, 100 by the one stage that succeeded.
    expect(stats).toEqual({
      generated_at: expect.any(String),
      tasks: { total: 3, by_status: { todo: 0, in_progress: 0, review: 0, done: 1, blocked: 1, cancelled: 1 } },
      agents: { total: 2, by_status: { active: 0, idle: 1, offline: 0, error: 0, stopped: 1 } },
      products: 1,
      pipelines: 2,
      executions: { total: 2, by_status: { queued: 0, running: 0, succeeded: 1, failed: 1, cancelled: 0 } },
      agent_runs: { succeeded: 0, failed: 0 },
      tokens_used: 170,
    });
  });

  it('counts an execution running until it ends, a cancelled one, and a deleted pipeline and task', async () => {
    // Prepare
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const api = engine(runner({ held }));
    const user = await newUser('running');
    const body = { name: 'Slow', stages: [{ name: 's', agent: 'qa-tester', config: { prompt: '[hold]' } }] };
    const pipeline = ok(await call(api.pipelines, 'POST', '/agent-pipelines', as(user, { body })));
    const execute = () =>
      call(api.pipelines, 'POST', `/agent-pipelines/${pipeline.id}/execute`, as(user, { body: { inputs: {} } }));
    const first = ok(await execute());
    const second = ok(await execute());
    const task = await createTask(api, user, { title: 'Gone soon' });

    // Act
    const whileRunning = await get(user, '/dashboard/stats');
    ok(await call(api.pipelines, 'POST', `/agent-pipelines/${pipeline.id}/executions/${second.id}/cancel`, as(user)));
    const afterCancel = await get(user, '/dashboard/stats');
    release();
    await api.queue.drain();
    ok(await call(api.pipelines, 'DELETE', `/agent-pipelines/${pipeline.id}`, as(user)));
    ok(await call(api.tasks, 'DELETE', `/tasks/${task.id}`, { token: await adminKey(user) }));
    const afterAll = await get(user, '/dashboard/stats');
    const activity = await call(activityLog, 'GET', '/activity-log', as(user, { query: { actor_type: 'user' } }));

    // Assess
    expect(whileRunning.executions).toEqual({
      total: 2,
      by_status: { queued: 0, running: 2, succeeded: 0, failed: 0, cancelled: 0 },
    });
    expect(afterCancel.executions.by_status).toMatchObject({ running: 1, cancelled: 1 });
    expect(afterAll.executions).toEqual({
      total: 2,
      by_status: { queued: 0, running: 0, succeeded: 1, failed: 0, cancelled: 1 },
    });
    expect(afterAll.pipelines).toBe(0);
    expect(afterAll.tasks.total).toBe(0);
    expect(first.id).not.toBe(second.id);
    const actions = activity.body.data.map((entry: { action: string }) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(['pipeline.execution_started', 'pipeline.execution_cancelled']));
    const system = await call(
      activityLog,
      'GET',
      '/activity-log',
      as(user, { query: { action: 'pipeline.execution_completed' } }),
    );
    expect(system.body.data).toEqual([
      expect.objectContaining({
        actor_type: 'system',
        actor_id: `pipeline:${pipeline.id}`,
        entity_id: String(first.id),
      }),
    ]);
  });

  it('keeps task counts equal to a recount under concurrent creates, transitions, reassignments, deletes', async () => {
    // Prepare: 12 todo tasks of the agent worker and 2 to delete, all created at once.
    const api = engine(runner());
    const user = await newUser('concurrent');
    await seedAgent(user.orgId, { name: 'worker' });
    const created = await Promise.all(
      Array.from({ length: 14 }, (_, index) => createTask(api, user, { title: `Task ${index}`, assignee: 'worker' })),
    );
    const key = await adminKey(user);
    const moving = created.slice(0, 12);
    const doomed = created.slice(12);
    const paths: Array<Array<Record<string, unknown>>> = [
      [{ status: 'in_progress' }, { status: 'done' }],
      [{ status: 'in_progress' }, { status: 'review' }, { status: 'done' }],
      [{ assignee: null }, { status: 'in_progress' }, { status: 'todo' }],
      [{ status: 'blocked' }, { status: 'todo', assignee: 'other' }, { status: 'cancelled' }],
    ];

    // Act: every task's path runs beside the others', with new tasks and deletes in between.
    const responses = (
      await Promise.all([
        ...moving.map(async (task, index) => {
          const answers: CallResult[] = [];
          for (const change of paths[index % paths.length] ?? []) {
            answers.push(await patchTask(api, user, task.id, change));
          }
          return answers;
        }),
        ...Array.from({ length: 6 }, async (_, index) => [
          await call(
            api.tasks,
            'POST',
            '/tasks',
            as(user, { body: { title: `Late ${index}`, ...(index % 2 ? { assignee: 'worker' } : {}) } }),
          ),
        ]),
        ...doomed.map(async (task) => [await call(api.tasks, 'DELETE', `/tasks/${task.id}`, { token: key })]),
      ])
    ).flat();
    const stats = await get(user, '/dashboard/stats');
    const health = await get(user, '/dashboard/agent-queue-health');

    // Assess: whatever landed (a collision may answer 409), the counters match the records.
    expect(responses.map((response) => response.status).filter((status) => ![200, 201, 409].includes(status))).toEqual(
      [],
    );
    expect(responses.filter((response) => response.status < 300).length).toBeGreaterThan(responses.length / 2);
    const counted = Object.fromEntries(
      await Promise.all(STATUSES.map(async (status) => [status, await recount(api, user, { status })])),
    );
    expect(stats.tasks.by_status).toEqual(counted);
    expect(stats.tasks.total).toBe(await recount(api, user, {}));
    const worker = health.agents.find((agent: { name: string }) => agent.name === 'worker');
    const workerTodo = await recount(api, user, { assignee: 'worker', status: 'todo' });
    expect(worker.queued).toBe(workerTodo);
    const entries = await queueEntries(user.orgId, 'worker');
    expect(entries.map((entry) => entry.id).sort()).toHaveLength(workerTodo);
    const unassigned = await queueEntries(user.orgId, '-');
    expect(health.unassigned.queued).toBe(unassigned.length);
    expect(health.unassigned.queued).toBe(
      (await recount(api, user, { status: 'todo' })) -
        workerTodo -
        (await recount(api, user, { assignee: 'other', status: 'todo' })),
    );
  });

  it('shows another organization’s counts to nobody', async () => {
    // Prepare
    const api = engine(runner());
    const owner = await newUser('owner');
    await createTask(api, owner, { title: 'Mine' });
    const stranger = await newUser('stranger');

    // Act
    const stats = await get(stranger, '/dashboard/stats');

    // Assess
    expect(stats.tasks.total).toBe(0);
    expect(stats.agents.total).toBe(0);
    expect(stats.tokens_used).toBe(0);
  });
});

describe('GET /dashboard/agent-queue-health', () => {
  it('answers each agent’s queued tasks, the oldest and average wait, following reassignment and claims', async () => {
    // Prepare: tasks queued at t0, t0 + 60 s and t0 + 120 s (the clock port), read at t0 + 300 s.
    const t0 = new Date(Date.now() - 3_600_000);
    const clock = fixedClock(t0);
    const api = engine(runner());
    const tasksAt = tasksHandler({ ports: { queue: api.queue, clock } });
    const user = await newUser('queues');
    await seedAgent(user.orgId, { name: 'alpha' });
    await seedAgent(user.orgId, { name: 'beta' });
    const create = async (body: Record<string, unknown>) =>
      ok(await call(tasksAt, 'POST', '/tasks', as(user, { body })));
    const first = await create({ title: 'First', assignee: 'alpha' });
    clock.advance(60_000);
    const second = await create({ title: 'Second', assignee: 'alpha' });
    await create({ title: 'Loose' });
    clock.advance(60_000);
    const third = await create({ title: 'Third', assignee: 'alpha' });
    clock.advance(180_000);
    const read = dashboardHandler({ ports: { clock } });
    const health = async () => ok(await call(read, 'GET', '/dashboard/agent-queue-health', as(user)));

    // Act
    const before = await health();
    ok(await call(tasksAt, 'PATCH', `/tasks/${first.id}`, as(user, { body: { assignee: 'beta' } })));
    ok(await call(tasksAt, 'PATCH', `/tasks/${second.id}`, as(user, { body: { status: 'in_progress' } })));
    ok(await call(tasksAt, 'PATCH', `/tasks/${third.id}`, as(user, { body: { title: 'Third, renamed' } })));
    const after = await health();

    // Assess: waits are 300, 240 (the loose task) and 180 seconds.
    expect(before).toEqual({
      generated_at: clock.now().toISOString(),
      agents: [
        {
          id: expect.any(Number),
          name: 'alpha',
          status: 'idle',
          queued: 3,
          oldest_task_id: first.id,
          oldest_wait_seconds: 300,
          average_wait_seconds: 240,
        },
        {
          id: expect.any(Number),
          name: 'beta',
          status: 'idle',
          queued: 0,
          oldest_task_id: null,
          oldest_wait_seconds: null,
          average_wait_seconds: null,
        },
      ],
      unassigned: {
        queued: 1,
        oldest_task_id: expect.any(Number),
        oldest_wait_seconds: 240,
        average_wait_seconds: 240,
      },
    });
    // Assess: equally queued, the longer wait first.
    expect(after.agents).toEqual([
      expect.objectContaining({
        name: 'beta',
        queued: 1,
        oldest_task_id: first.id,
        oldest_wait_seconds: 300,
        average_wait_seconds: 300,
      }),
      expect.objectContaining({
        name: 'alpha',
        queued: 1,
        oldest_task_id: third.id,
        oldest_wait_seconds: 180,
        average_wait_seconds: 180,
      }),
    ]);
  });
});

describe('GET /dashboard/agent-efficiency', () => {
  it('sorts the agents by completed tasks per 1,000 tokens, those without tokens last', async () => {
    // Prepare
    const user = await newUser('efficiency');
    await seedAgent(user.orgId, { name: 'thrifty', tasks_completed: 6, tokens_used: 2_000 });
    await seedAgent(user.orgId, { name: 'lavish', tasks_completed: 9, tokens_used: 9_000, tasks_failed: 2 });
    await seedAgent(user.orgId, { name: 'fresh' });
    await seedAgent(user.orgId, { name: 'precise', tasks_completed: 1, tokens_used: 3 });

    // Act
    const response = await get(user, '/dashboard/agent-efficiency');

    // Assess
    expect(response.agents).toEqual([
      {
        id: expect.any(Number),
        name: 'precise',
        status: 'idle',
        tasks_completed: 1,
        tasks_failed: 0,
        tokens_used: 3,
        tasks_per_1k_tokens: 333.333,
      },
      {
        id: expect.any(Number),
        name: 'thrifty',
        status: 'idle',
        tasks_completed: 6,
        tasks_failed: 0,
        tokens_used: 2000,
        tasks_per_1k_tokens: 3,
      },
      {
        id: expect.any(Number),
        name: 'lavish',
        status: 'idle',
        tasks_completed: 9,
        tasks_failed: 2,
        tokens_used: 9000,
        tasks_per_1k_tokens: 1,
      },
      {
        id: expect.any(Number),
        name: 'fresh',
        status: 'idle',
        tasks_completed: 0,
        tasks_failed: 0,
        tokens_used: 0,
        tasks_per_1k_tokens: null,
      },
    ]);
  });
});

describe('GET /dashboard/overview', () => {
  it('answers the balance, the last agent runs, the protocols and the usage of each of the last 7 days', async () => {
    // Prepare: a run yesterday (the clock port) and a success and a failure today.
    const api = engine(runner());
    const user = await newUser('overview');
    const agent = await seedAgent(user.orgId, { name: 'doer' });
    const yesterday = fixedClock(new Date(Date.now() - 86_400_000));
    await createTask(api, user, { title: 'Yesterday’s', assignee: 'doer' });
    await api.tick(yesterday)({ org_id: user.orgId, agent_id: agent.id });
    const good = await createTask(api, user, { title: 'Good one', assignee: 'doer', priority: 'P0' });
    await api.tick()({ org_id: user.orgId, agent_id: agent.id });
    const bad = await createTask(api, user, { title: 'Bad one [fail]', assignee: 'doer' });
    await api.tick()({ org_id: user.orgId, agent_id: agent.id });
    for (const [key, value] of [
      ['integration.llm.base_url', 'https://llm.example.com/v1'],
      ['integration.llm.api_key', 'sk-hidden-value'],
    ]) {
      ok(await call(credentials, 'POST', '/credentials', as(user, { body: { key, value } })));
    }
    ok(
      await call(
        api.tenantConfig,
        'PATCH',
        '/tenant-config',
        as(user, {
          body: { webhooks: { task_completed: 'https://hooks.example.com/in' } },
        }),
      ),
    );

    // Act
    const overview = await get(user, '/dashboard/overview');

    // Assess: the signup bonus less two successful runs of 100 tokens.
    expect(overview.token_balance).toBe(10_000 - 200);
    expect(overview.recent_runs).toEqual([
      {
        agent: 'doer',
        task_id: bad.id,
        outcome: 'failed',
        tokens: null,
        model: null,
        error: 'asked to fail',
        at: expect.any(String),
      },
      {
        agent: 'doer',
        task_id: good.id,
        outcome: 'succeeded',
        tokens: 100,
        model: 'test-model',
        error: null,
        at: expect.any(String),
      },
      expect.objectContaining({ agent: 'doer', outcome: 'succeeded', tokens: 100 }),
    ]);
    const byId = Object.fromEntries(overview.protocols.map((protocol: { id: string }) => [protocol.id, protocol]));
    expect(byId.llm).toMatchObject({ status: 'configured', protocol: expect.stringContaining('OpenAI-compatible') });
    expect(byId.git).toMatchObject({ status: 'not_configured' });
    expect(byId.outbound_webhooks).toMatchObject({ status: 'configured', events: ['task_completed'] });
    expect(JSON.stringify(overview)).not.toMatch(/sk-hidden-value|hooks\.example\.com|llm\.example\.com/);
    expect(overview.usage_7d).toHaveLength(7);
    const [today, dayBefore] = [overview.usage_7d[6], overview.usage_7d[5]];
    expect(today).toEqual({
      date: new Date().toISOString().slice(0, 10),
      tokens_used: 100,
      agent_runs: 2,
      tasks_completed: 0,
      executions_started: 0,
    });
    expect(dayBefore).toEqual({
      date: yesterday.now().toISOString().slice(0, 10),
      tokens_used: 100,
      agent_runs: 1,
      tasks_completed: 0,
      executions_started: 0,
    });
    expect(overview.usage_7d.slice(0, 5).every((day: { tokens_used: number }) => day.tokens_used === 0)).toBe(true);
  });
});
