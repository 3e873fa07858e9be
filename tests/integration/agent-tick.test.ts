import { describe, expect, it } from 'vitest';
import { agentRunsHandler } from '#functions/http/agent-runs';
import { handler as changelog } from '#functions/http/changelog';
import { tasksHandler } from '#functions/http/tasks';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { handler as tokens } from '#functions/http/tokens';
import { agentTickHandler } from '#functions/schedule/agent-tick';
import type { AgentItem } from '#lib/agents/agent-keys';
import { getAgentById } from '#lib/agents/agent-records';
import type { TickOutcome } from '#lib/agents/agent-tick';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { AgentRunError } from '#lib/errors';
import { fixedClock } from '#lib/kernel/clock';
import type { AgentRunner, AgentRunRequest } from '#lib/kernel/ports';
import { readLogLines } from '#lib/logs/log-records';
import { activityOf } from '#tests/support/activity';
import { seedAgent } from '#tests/support/agents';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { testQueue } from '#tests/support/queues';

const tasks = tasksHandler({ ports: { queue: testQueue } });
const tenantConfig = tenantConfigHandler({ ports: { queue: testQueue } });
const agentRuns = agentRunsHandler();

/** A runner whose answer depends only on the request, like the local runner, counting its runs. */
function countingRunner(tokensPerRun = 120): AgentRunner & { requests: AgentRunRequest[] } {
  const requests: AgentRunRequest[] = [];
  return {
    kind: 'local',
    requests,
    async run(request) {
      requests.push(request);
      if (request.instructions.includes('[fail]')) throw new AgentRunError('asked to fail', { retryable: false });
      return {
        output: { summary: `${request.agent.name} did: ${request.instructions.split('\n')[0]}` },
        usage: { input_tokens: tokensPerRun - 20, output_tokens: 20, total_tokens: tokensPerRun },
        model: 'test-model',
      };
    },
  };
}

/** A runner that holds every run until `release()`, to keep a tick running while another starts. */
function heldRunner(): AgentRunner & { started: Promise<void>; release: () => void } {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const startedPromise = new Promise<void>((resolve) => {
    started = resolve;
  });
  return {
    kind: 'local',
    started: startedPromise,
    release,
    async run() {
      started();
      await gate;
      return { output: { summary: 'held' }, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 }, model: 'm' };
    },
  };
}

const as = (user: TestUser, body?: unknown) => ({ token: user.token, ...(body === undefined ? {} : { body }) });

async function createTask(user: TestUser, body: Record<string, unknown>): Promise<{ id: number }> {
  const response = await call(tasks, 'POST', '/tasks', as(user, body));
  if (response.status !== 201) throw new Error(`create task failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

const getTask = async (user: TestUser, id: number) => (await call(tasks, 'GET', `/tasks/${id}`, as(user))).body.data;
const balanceOf = async (user: TestUser): Promise<number> =>
  (await call(tokens, 'GET', '/tokens/balance', as(user))).body.data.balance;

async function itemsOf(orgId: string, prefix: string): Promise<Record<string, unknown>[]> {
  const result = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix },
    ConsistentRead: true,
  });
  return result.Items ?? [];
}

const agentOf = async (orgId: string, id: number) => (await getAgentById({ orgId, id, consistent: true })) as AgentItem;

describe('the agent tick', () => {
  it('claims the highest-priority todo task, runs it, consumes its tokens and moves it to review', async () => {
    // Prepare
    const owner = await newUser('tick');
    const agent = await seedAgent(owner.orgId, { name: 'builder' });
    const low = await createTask(owner, { title: 'Tidy the docs', priority: 'P3', assignee: 'builder' });
    const high = await createTask(owner, { title: 'Fix the login bug', priority: 'P0', assignee: 'builder' });
    await createTask(owner, { title: 'Someone else’s work', priority: 'P0', assignee: 'other' });
    const runner = countingRunner(150);
    const tick = agentTickHandler({ runner, queue: testQueue });
    const before = await balanceOf(owner);

    // Act
    const outcome = await tick({ org_id: owner.orgId, agent_id: agent.id });

    // Assess
    expect(outcome).toEqual({ outcome: 'succeeded', task_id: high.id, status: 'review', tokens: 150 });
    expect(runner.requests).toHaveLength(1);
    expect(runner.requests[0]).toMatchObject({
      orgId: owner.orgId,
      agent: { name: 'builder', identity: agent.identity, core_rules: agent.core_rules },
      instructions: expect.stringContaining('Fix the login bug'),
      input: { task: { id: high.id, title: 'Fix the login bug' } },
    });
    const task = await getTask(owner, high.id);
    expect(task.status).toBe('review');
    expect(task.last_run).toMatchObject({
      agent: 'builder',
      status: 'succeeded',
      attempt: 1,
      output: { summary: expect.stringContaining('Fix the login bug') },
      usage: { total_tokens: 150 },
      model: 'test-model',
      error: null,
    });
    expect((await getTask(owner, low.id)).status).toBe('todo');
    expect(await balanceOf(owner)).toBe(before - 150);
    const after = await agentOf(owner.orgId, agent.id);
    expect(after).toMatchObject({
      status: 'idle',
      current_task: null,
      tasks_completed: 1,
      tokens_used: 150,
      last_error: null,
    });
    expect(after.last_heartbeat).not.toBeNull();
    const entries = await call(changelog, 'GET', '/changelog', { token: owner.token, query: { agent: 'builder' } });
    expect(entries.body.data).toEqual([
      expect.objectContaining({ task_id: high.id, agent: 'builder', title: expect.stringContaining('review') }),
    ]);
    const { lines: logs } = await readLogLines(owner.orgId, {}, 200, new Date());
    expect(logs.map((line) => line.message)).toContain(`Finished task #${high.id} (review), 150 tokens`);
    const activity = await activityOf(owner.orgId);
    expect(activity.filter((entry) => entry.actor_id === 'agent:builder').map((entry) => entry.action)).toEqual([
      'task.claimed',
      'task.run_succeeded',
    ]);
  });

  it('moves the task to done when the agent’s config says so, with the completion’s changelog entry', async () => {
    // Prepare
    const owner = await newUser('tickdone');
    const agent = await seedAgent(owner.orgId, { name: 'closer', config: { complete_to: 'done' } });
    const task = await createTask(owner, { title: 'Ship it', assignee: 'closer' });

    // Act
    const outcome = await agentTickHandler({ runner: countingRunner(), queue: testQueue })({
      org_id: owner.orgId,
      agent_id: agent.id,
    });

    // Assess
    expect(outcome).toMatchObject({ outcome: 'succeeded', status: 'done' });
    expect((await getTask(owner, task.id)).status).toBe('done');
    const entries = await call(changelog, 'GET', '/changelog', {
      token: owner.token,
      query: { task_id: String(task.id) },
    });
    expect(entries.body.data).toEqual([expect.objectContaining({ title: `Completed task #${task.id}: Ship it` })]);
  });

  it('skips without running when the agent has no runnable task, and says why', async () => {
    // Prepare
    const owner = await newUser('ticknone');
    const agent = await seedAgent(owner.orgId, { name: 'waiter' });
    const runner = countingRunner();

    // Act
    const outcome = await agentTickHandler({ runner, queue: testQueue })({ org_id: owner.orgId, agent_id: agent.id });
    const check = await call(agentRuns, 'GET', '/agent-runs/idle-check', {
      query: { agent_name: 'waiter', organization_id: owner.orgId },
    });

    // Assess
    expect(outcome).toEqual({ outcome: 'skipped', reason: 'no_task' });
    expect(runner.requests).toHaveLength(0);
    expect((await agentOf(owner.orgId, agent.id)).skip_reason).toBe('no_task');
    expect(check.status).toBe(200);
    expect(check.body.data).toMatchObject({ agent_name: 'waiter', skip: true, reason: 'no_task', task_id: null });
  });

  it('puts the task back to todo with the error when the run fails, and shows the agent as error', async () => {
    // Prepare
    const owner = await newUser('tickfail');
    const agent = await seedAgent(owner.orgId, { name: 'breaker' });
    const task = await createTask(owner, { title: 'Impossible [fail]', assignee: 'breaker' });
    const hooks = { agent_error: 'https://hooks.example.com/agent-errors' };
    await call(tenantConfig, 'PATCH', '/tenant-config', as(owner, { webhooks: hooks }));
    const before = await balanceOf(owner);
    const tick = agentTickHandler({ runner: countingRunner(), queue: testQueue });

    // Act
    const first = await tick({ org_id: owner.orgId, agent_id: agent.id });
    await tick({ org_id: owner.orgId, agent_id: agent.id });
    const third = await tick({ org_id: owner.orgId, agent_id: agent.id });
    const fourth = await tick({ org_id: owner.orgId, agent_id: agent.id });

    // Assess
    expect(first).toEqual({ outcome: 'failed', task_id: task.id, status: 'todo', error: 'asked to fail' });
    expect(third).toEqual({ outcome: 'failed', task_id: task.id, status: 'blocked', error: 'asked to fail' });
    expect(fourth).toEqual({ outcome: 'skipped', reason: 'no_task' });
    const stored = await getTask(owner, task.id);
    expect(stored.status).toBe('blocked');
    expect(stored.last_run).toMatchObject({ status: 'failed', attempt: 3, error: 'asked to fail', usage: null });
    expect(await balanceOf(owner)).toBe(before);
    expect(await agentOf(owner.orgId, agent.id)).toMatchObject({
      status: 'error',
      last_error: 'asked to fail',
      tasks_failed: 3,
    });
    const deliveries = await itemsOf(owner.orgId, 'WEBHOOKDELIVERY#');
    expect(deliveries).toHaveLength(3);
    expect(deliveries.map((delivery) => delivery.event_type)).toEqual(['agent_error', 'agent_error', 'agent_error']);
    expect(JSON.parse(String(deliveries[0]?.payload))).toMatchObject({
      data: { agent: { name: 'breaker' }, task: { id: task.id }, error: 'asked to fail' },
    });
  });

  it('never overlaps two ticks of one agent: the second skips as busy while the first runs', async () => {
    // Prepare
    const owner = await newUser('tickbusy');
    const agent = await seedAgent(owner.orgId, { name: 'solo' });
    await createTask(owner, { title: 'Long job', assignee: 'solo' });
    await createTask(owner, { title: 'Second job', assignee: 'solo' });
    const runner = heldRunner();
    const tick = agentTickHandler({ runner, queue: testQueue });

    // Act
    const first = tick({ org_id: owner.orgId, agent_id: agent.id });
    await runner.started;
    const second = await tick({ org_id: owner.orgId, agent_id: agent.id });
    runner.release();

    // Assess
    expect(second).toEqual({ outcome: 'skipped', reason: 'busy' });
    expect(await first).toMatchObject({ outcome: 'succeeded' });
  });

  it('records a run whose task was cancelled meanwhile as discarded: tokens consumed, no output kept', async () => {
    // Prepare
    const owner = await newUser('tickdiscard');
    const agent = await seedAgent(owner.orgId, { name: 'late' });
    const task = await createTask(owner, { title: 'Soon cancelled', assignee: 'late' });
    const runner = heldRunner();
    const tick = agentTickHandler({ runner, queue: testQueue });
    const before = await balanceOf(owner);

    // Act
    const running = tick({ org_id: owner.orgId, agent_id: agent.id });
    await runner.started;
    const cancelled = await call(tasks, 'PATCH', `/tasks/${task.id}`, as(owner, { status: 'cancelled' }));
    runner.release();
    const outcome = await running;

    // Assess
    expect(cancelled.status).toBe(200);
    expect(outcome).toMatchObject({ outcome: 'succeeded', task_id: task.id });
    expect((await getTask(owner, task.id)).status).toBe('cancelled');
    expect(await balanceOf(owner)).toBe(before - 2);
    const activity = await activityOf(owner.orgId);
    expect(activity.filter((entry) => entry.actor_id === 'agent:late').map((entry) => entry.action)).toEqual([
      'task.claimed',
      'task.run_discarded',
    ]);
    expect(activity.find((entry) => entry.action === 'task.run_discarded')).toMatchObject({
      entity_type: 'task',
      entity_id: String(task.id),
      metadata: { tokens: 2, model: 'm' },
    });
  });

  it('puts back the task of a tick that stopped mid-run once its lease expired, and runs it again', async () => {
    // Prepare: a tick claims the task and never finishes (as a crashed or timed-out function would not)
    const owner = await newUser('tickcrash');
    const agent = await seedAgent(owner.orgId, { name: 'phoenix' });
    const task = await createTask(owner, { title: 'Survive the crash', assignee: 'phoenix' });
    const clock = fixedClock(new Date());
    const stuck = heldRunner();
    void agentTickHandler({ runner: stuck, queue: testQueue, clock })({ org_id: owner.orgId, agent_id: agent.id });
    await stuck.started;
    const runner = countingRunner();
    const tick = agentTickHandler({ runner, queue: testQueue, clock });

    // Act: a tick while the lease holds, then one after it expired
    const whileHeld = await tick({ org_id: owner.orgId, agent_id: agent.id });
    clock.advance(60 * 60 * 1000);
    const afterExpiry = await tick({ org_id: owner.orgId, agent_id: agent.id });

    // Assess
    expect(whileHeld).toEqual({ outcome: 'skipped', reason: 'busy' });
    expect(afterExpiry).toEqual({ outcome: 'succeeded', task_id: task.id, status: 'review', tokens: 120 });
    const stored = await getTask(owner, task.id);
    expect(stored.last_run).toMatchObject({ status: 'succeeded', attempt: 2 });
    const { lines: logs } = await readLogLines(owner.orgId, {}, 200, new Date());
    expect(logs.map((line) => line.message)).toContain(
      `Task #${task.id}: The run was interrupted: the tick running it stopped before it finished; back to todo`,
    );
    expect((await agentOf(owner.orgId, agent.id)).running_task_id).toBeNull();
    stuck.release();
  });

  it('never gives one task to two agents ticking at once', async () => {
    // Prepare
    const owner = await newUser('tickrace');
    const agents = await Promise.all(
      ['racer-a', 'racer-b', 'racer-c'].map((name) =>
        seedAgent(owner.orgId, { name, config: { take_unassigned: true } }),
      ),
    );
    const created = [];
    for (const title of ['One', 'Two', 'Three', 'Four', 'Five']) created.push(await createTask(owner, { title }));
    const tick = agentTickHandler({ runner: countingRunner(), queue: testQueue });

    // Act
    const outcomes: Array<TickOutcome | { outcome: 'invalid_event' }> = [];
    for (let round = 0; round < 2; round += 1) {
      outcomes.push(...(await Promise.all(agents.map((agent) => tick({ org_id: owner.orgId, agent_id: agent.id })))));
    }

    // Assess
    const ran = outcomes.flatMap((outcome) => (outcome.outcome === 'succeeded' ? [outcome.task_id] : []));
    expect(new Set(ran).size).toBe(ran.length);
    expect(ran.sort()).toEqual(created.map((task) => task.id).sort());
    for (const task of created) {
      const stored = await getTask(owner, task.id);
      expect(stored.status).toBe('review');
      expect(stored.assignee).toBe(stored.last_run.agent);
    }
  });

  it('skips a stopped agent, a short balance and an exhausted budget, consuming nothing', async () => {
    // Prepare
    const owner = await newUser('tickskip');
    const stopped = await seedAgent(owner.orgId, { name: 'sleeper', status: 'stopped' });
    const budgeted = await seedAgent(owner.orgId, {
      name: 'thrifty',
      monthly_token_budget: 100,
      budget_month: new Date().toISOString().slice(0, 7),
      budget_used: 100,
    });
    const capped = await seedAgent(owner.orgId, { name: 'greedy', config: { max_tokens: 10_000_000 } });
    for (const assignee of ['sleeper', 'thrifty', 'greedy'])
      await createTask(owner, { title: `For ${assignee}`, assignee });
    const runner = countingRunner();
    const tick = agentTickHandler({ runner, queue: testQueue });
    const before = await balanceOf(owner);

    // Act
    const outcomes = [];
    for (const agent of [stopped, budgeted, capped])
      outcomes.push(await tick({ org_id: owner.orgId, agent_id: agent.id }));
    const check = await call(agentRuns, 'GET', '/agent-runs/idle-check', {
      query: { agent_name: 'thrifty', organization_id: owner.orgId },
    });

    // Assess
    expect(outcomes).toEqual([
      { outcome: 'skipped', reason: 'stopped' },
      { outcome: 'skipped', reason: 'budget_exhausted' },
      { outcome: 'skipped', reason: 'insufficient_balance' },
    ]);
    expect(runner.requests).toHaveLength(0);
    expect(await balanceOf(owner)).toBe(before);
    expect((await agentOf(owner.orgId, budgeted.id)).skip_reason).toBe('budget_exhausted');
    expect(check.body.data).toMatchObject({ skip: true, reason: 'budget_exhausted' });
    expect(JSON.stringify(check.body)).not.toContain(String(before));
  });
});

describe('GET /agent-runs/idle-check', () => {
  it('answers 400 without agent_name or organization, and 404 for an unknown agent', async () => {
    // Prepare
    const owner = await newUser('idle');

    // Act
    const noName = await call(agentRuns, 'GET', '/agent-runs/idle-check', { query: { organization_id: owner.orgId } });
    const noOrg = await call(agentRuns, 'GET', '/agent-runs/idle-check', { query: { agent_name: 'x' } });
    const unknown = await call(agentRuns, 'GET', '/agent-runs/idle-check', {
      query: { agent_name: 'nobody', organization_id: owner.orgId },
    });
    const badMode = await call(agentRuns, 'GET', '/agent-runs/idle-check', {
      query: { agent_name: 'x', organization_id: owner.orgId, run_mode: 'dance' },
    });

    // Assess
    expect(noName.status).toBe(400);
    expect(noName.body.error.details[0].path).toBe('query.agent_name');
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.error.details[0].path).toBe('query.organization_id');
    expect(unknown.status).toBe(404);
    expect(badMode.status).toBe(400);
  });

  it('does not check tasks in discovery mode', async () => {
    // Prepare
    const owner = await newUser('idledisc');
    await seedAgent(owner.orgId, { name: 'scout' });

    // Act
    const check = await call(agentRuns, 'GET', '/agent-runs/idle-check', {
      query: { agent_name: 'scout', organization_id: owner.orgId, run_mode: 'discovery' },
    });

    // Assess
    expect(check.body.data).toMatchObject({ skip: false, reason: null, run_mode: 'discovery' });
  });
});
