import { beforeAll, describe, expect, it } from 'vitest';
import { agentsHandler } from '#functions/http/agents';
import { agentKeys, agentScheduleName } from '#lib/agents/agent-keys';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { fixedClock } from '#lib/kernel/clock';
import type { Clock } from '#lib/kernel/ports';
import { readLogLines } from '#lib/logs/log-records';
import { activityOf } from '#tests/support/activity';
import { type CallOptions, type CallResult, call, newUser, type TestUser } from '#tests/support/identity';
import { type RecordingScheduler, recordingScheduler } from '#tests/support/scheduler';

/**
 * The agents API, operational (`/agents`) and public (`/v1/public/agents`), against DynamoDB Local with
 * a recording scheduler: the creation bootstrap and its steps, names, lists, stop/start/restart and
 * their schedules, activity and log entries, the public views of the same records, and tenancy.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps every other
  // user an ordinary one.
  await newUser('instanceadmin');
});

/** Time stands still, so that schedules' next runs are exact; tokens stay valid for the file's run. */
const clock = fixedClock(new Date(Math.floor(Date.now() / 1000) * 1000));
const NOW = clock.now();
const at = (secondsFromNow: number) => new Date(NOW.getTime() + secondsFromNow * 1000).toISOString();

function agentsApi(scheduler: RecordingScheduler = recordingScheduler(), options: { clock?: Clock } = {}) {
  return { scheduler, handler: agentsHandler({ ports: { scheduler, clock: options.clock ?? clock } }) };
}

type Api = ReturnType<typeof agentsApi>;

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

const templateBody = (name: string) => ({
  name,
  display_name: 'Full-Stack Dev',
  model: 'standard-model',
  interval_sec: 300,
  identity: 'You are a careful full-stack developer.',
  soul_content: '# Scope\nWeb applications.\n\n# Style\nSmall, reviewed changes.',
  core_rules: 'Never push to main.\nRun the tests before finishing.\n\nAsk when unsure.',
  tools: ['file_read', 'file_write', 'git', 'shell'],
  capabilities: ['code generation', 'debugging', 'testing', 'refactoring'],
  config: { complete_to: 'done', max_tokens: 4000 },
  template_slug: 'full-stack-dev',
  template_name: 'Full-Stack Dev',
});

async function createAgent(api: Api, user: TestUser, body: Record<string, unknown>) {
  const response = await call(api.handler, 'POST', '/agents', as(user, { body }));
  if (response.status !== 200) throw new Error(`create agent failed: ${JSON.stringify(response.body)}`);
  return response.body.data.agent as { id: number; name: string; [field: string]: unknown };
}

const control = (api: Api, user: TestUser, name: string, action: string, body?: unknown) =>
  call(api.handler, 'POST', `/agents/${name}/${action}`, as(user, body === undefined ? {} : { body }));

/** Items of the organization whose sort key starts with `prefix`, oldest first. */
async function itemsOf(orgId: string, prefix: string): Promise<Record<string, unknown>[]> {
  const result = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix },
    ConsistentRead: true,
  });
  return result.Items ?? [];
}

const actionsOf = async (orgId: string) => (await activityOf(orgId)).map((entry) => entry.action);
/** The organization's log lines (their own partition), oldest first. */
const logMessagesOf = async (orgId: string) =>
  (await readLogLines(orgId, {}, 200, new Date())).lines.map((line) => line.message).reverse();

/** An agent as `/agents` shows a fresh agent without an interval, overridden by `fields`. */
const agentRecord = (fields: Record<string, unknown>) => ({
  id: expect.any(Number),
  name: expect.any(String),
  display_name: null,
  role: null,
  status: 'idle',
  model: null,
  emoji: null,
  color: null,
  interval_sec: null,
  last_heartbeat: NOW.toISOString(),
  created_at: NOW.toISOString(),
  updated_at: NOW.toISOString(),
  identity: null,
  soul_content: null,
  core_rules: null,
  tools: [],
  capabilities: [],
  config: {},
  template_slug: null,
  workspace_path: expect.any(String),
  current_task: null,
  schedule: null,
  automations: [{ id: expect.any(Number), name: expect.any(String), type: 'schedule', status: 'disabled' }],
  completion_rate: null,
  tasks_completed: 0,
  tasks_failed: 0,
  tokens_used: 0,
  budget: null,
  last_run_at: null,
  last_error: null,
  skip_reason: null,
  ...fields,
});

const invalid = (path: string) => ({
  error: {
    code: 'VALIDATION_ERROR',
    message: 'The request is not valid',
    details: [{ path, message: expect.any(String) }],
  },
});

const notFound = { error: { code: 'NOT_FOUND', message: 'Agent not found', details: [] } };

describe('POST /agents', () => {
  it('creates an agent from a template-shaped body, reporting every bootstrap step in order', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();

    // Act
    const response = await call(api.handler, 'POST', '/agents', as(owner, { body: templateBody('builder') }));

    // Assess
    expect(response.status).toBe(200);
    const { agent, steps } = response.body.data;
    expect(steps.map((step: { step: string }) => step.step)).toEqual([
      'registration',
      'workspace',
      'rules',
      'run_configuration',
      'automations',
      'schedule',
      'loading',
      'heartbeat',
      'log',
    ]);
    expect(steps.every((step: { ok: boolean }) => step.ok)).toBe(true);
    expect(steps[0].detail).toContain('from template Full-Stack Dev');
    expect(steps[1].detail).toBe('workspace agents/builder');
    expect(steps[2].detail).toContain('3 core rule lines, 2 soul sections');
    expect(steps[3].detail).toContain('finished tasks go to done');
    expect(steps[5].detail).toBe('rate(300 seconds), enabled');
    expect(agent).toEqual(
      agentRecord({
        name: 'builder',
        display_name: 'Full-Stack Dev',
        model: 'standard-model',
        interval_sec: 300,
        identity: 'You are a careful full-stack developer.',
        soul_content: '# Scope\nWeb applications.\n\n# Style\nSmall, reviewed changes.',
        core_rules: 'Never push to main.\nRun the tests before finishing.\n\nAsk when unsure.',
        tools: ['file_read', 'file_write', 'git', 'shell'],
        capabilities: ['code generation', 'debugging', 'testing', 'refactoring'],
        config: { complete_to: 'done', max_tokens: 4000 },
        template_slug: 'full-stack-dev',
        workspace_path: 'agents/builder',
        schedule: {
          expression: 'rate(300 seconds)',
          enabled: true,
          interval_sec: 300,
          note: null,
          next_runs: [at(300), at(600), at(900)],
        },
        automations: [{ id: expect.any(Number), name: 'builder-tick', type: 'schedule', status: 'active' }],
      }),
    );
    expect(api.scheduler.calls).toEqual([
      {
        op: 'put',
        spec: {
          name: agentScheduleName(owner.orgId, agent.id),
          target: 'agent-tick',
          payload: { org_id: owner.orgId, agent_id: agent.id },
          intervalSec: 300,
          enabled: true,
        },
      },
    ]);
    expect(await actionsOf(owner.orgId)).toContain('agent.created');
    // Both lines carry the same (fixed) time, so their order is not theirs to keep.
    expect((await logMessagesOf(owner.orgId)).sort()).toEqual([
      'agent builder loaded: idle, rate(300 seconds)',
      `agent builder registered (#${agent.id})`,
    ]);
    const [automation] = await itemsOf(owner.orgId, 'AUTOMATION#builder#');
    expect(automation).toMatchObject({
      name: 'builder-tick',
      agent_name: 'builder',
      type: 'schedule',
      path: 'functions/schedule/agent-tick',
      status: 'active',
    });
  });

  it('says in the schedule step how the scheduler rounded the interval', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi(recordingScheduler({ roundUpTo: 60 }));

    // Act
    const response = await call(
      api.handler,
      'POST',
      '/agents',
      as(owner, { body: { name: 'rounder', interval_sec: 90 } }),
    );

    // Assess
    expect(response.status).toBe(200);
    const schedule = response.body.data.steps.find((step: { step: string }) => step.step === 'schedule');
    expect(schedule).toEqual({
      step: 'schedule',
      ok: true,
      detail: 'rate(120 seconds), enabled; interval_sec 90 rounded up to 120',
    });
    expect(response.body.data.agent.schedule).toMatchObject({
      interval_sec: 120,
      note: 'interval_sec 90 rounded up to 120',
    });
    expect(response.body.data.agent.interval_sec).toBe(90);
  });

  it('creates an agent without an interval that has no schedule and runs only when asked', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();

    // Act
    const response = await call(
      api.handler,
      'POST',
      '/agents',
      as(owner, {
        body: { name: 'on-demand', color: '#ABC', emoji: '🤖', role: 'helper', monthly_token_budget: 5000 },
      }),
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.steps.find((step: { step: string }) => step.step === 'schedule')).toEqual({
      step: 'schedule',
      ok: true,
      detail: 'no interval_sec: runs only when asked',
    });
    expect(response.body.data.agent).toEqual(
      agentRecord({
        name: 'on-demand',
        color: '#aabbcc',
        emoji: '🤖',
        role: 'helper',
        workspace_path: 'agents/on-demand',
        automations: [{ id: expect.any(Number), name: 'on-demand-tick', type: 'schedule', status: 'disabled' }],
        budget: { monthly_token_budget: 5000, month: NOW.toISOString().slice(0, 7), used: 0, remaining: 5000 },
      }),
    );
    expect(api.scheduler.calls).toEqual([]);
  });

  it('answers 409 when the name exists, and to one of two concurrent creates of a name', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();
    await createAgent(api, owner, { name: 'taken' });

    // Act
    const again = await call(api.handler, 'POST', '/agents', as(owner, { body: { name: 'taken' } }));
    const racing = await Promise.all(
      [1, 2].map(() => call(api.handler, 'POST', '/agents', as(owner, { body: { name: 'racer', interval_sec: 60 } }))),
    );

    // Assess
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      error: {
        code: 'CONFLICT',
        message: 'An agent with this name exists',
        details: [{ path: 'body.name', message: 'is taken' }],
      },
    });
    expect(racing.map((response) => response.status).sort()).toEqual([200, 409]);
    const names = (await itemsOf(owner.orgId, 'AGENT#')).map((item) => item.name);
    expect(names.sort()).toEqual(['racer', 'taken']);
  });

  it.each([
    ['upper case', 'Builder'],
    ['a leading digit', '1builder'],
    ['an underscore', 'my_agent'],
    ['a slash', 'a/b'],
    ['41 characters', `a${'b'.repeat(40)}`],
    ['nothing', ''],
  ])('answers 400 for a name with %s', async (_case, name) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(agentsApi().handler, 'POST', '/agents', as(owner, { body: { name } }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('body.name'));
  });

  it.each([
    ['config.complete_to', { config: { complete_to: 'archive' } }, 'body.config.complete_to'],
    ['config.take_unassigned', { config: { take_unassigned: 'yes' } }, 'body.config.take_unassigned'],
    ['config.max_tokens 0', { config: { max_tokens: 0 } }, 'body.config.max_tokens'],
    ['a fractional config.max_tokens', { config: { max_tokens: 2.5 } }, 'body.config.max_tokens'],
    ['a colour', { color: 'red' }, 'body.color'],
    ['interval_sec 0', { interval_sec: 0 }, 'body.interval_sec'],
    ['interval_sec above a day', { interval_sec: 86_401 }, 'body.interval_sec'],
    ['a fractional interval_sec', { interval_sec: 1.5 }, 'body.interval_sec'],
    ['a workspace path with ..', { workspace_path: 'agents/../../etc' }, 'body.workspace_path'],
    ['monthly_token_budget 0', { monthly_token_budget: 0 }, 'body.monthly_token_budget'],
    ['a tool that is not a string', { tools: ['git', 7] }, 'body.tools[1]'],
  ])('answers 400 for an invalid %s', async (_case, fields, path) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(agentsApi().handler, 'POST', '/agents', as(owner, { body: { name: 'x', ...fields } }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(path));
  });

  it('leaves the agent in error when the scheduler fails, reporting every step, and restart recovers it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const broken = agentsApi(recordingScheduler({ failing: ['put'], message: 'scheduler is down' }));
    const working = agentsApi();

    // Act
    const response = await call(broken.handler, 'POST', '/agents', as(owner, { body: templateBody('fragile') }));
    const restarted = await control(working, owner, 'fragile', 'restart');

    // Assess
    expect(response.status).toBe(200);
    const steps = response.body.data.steps as Array<{ step: string; ok: boolean; detail: string }>;
    expect(steps.map((step) => [step.step, step.ok])).toEqual([
      ['registration', true],
      ['workspace', true],
      ['rules', true],
      ['run_configuration', true],
      ['automations', true],
      ['schedule', false],
      ['loading', false],
      ['heartbeat', true],
      ['log', true],
    ]);
    expect(steps[5]?.detail).toBe('scheduler failed: scheduler is down');
    expect(response.body.data.agent).toMatchObject({
      status: 'error',
      schedule: null,
      last_error: 'schedule: scheduler is down',
      automations: [{ name: 'fragile-tick', status: 'disabled' }],
    });
    expect(await logMessagesOf(owner.orgId)).toContain('agent fragile not loaded: schedule failed: scheduler is down');
    expect(restarted.status).toBe(200);
    expect(restarted.body.data).toMatchObject({
      status: 'idle',
      last_error: null,
      schedule: { expression: 'rate(300 seconds)', enabled: true },
      automations: [{ name: 'fragile-tick', status: 'active' }],
    });
  });
});

describe('GET /agents', () => {
  it('lists the organization’s agents oldest first, filtered by status and paged', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();
    for (const name of ['alpha', 'beta', 'gamma', 'delta']) await createAgent(api, owner, { name, interval_sec: 60 });
    await control(api, owner, 'beta', 'stop');
    await control(api, owner, 'delta', 'stop');
    const stranger = await newUser('stranger');
    await createAgent(api, stranger, { name: 'alpha' });

    // Act
    const all = await call(api.handler, 'GET', '/agents', as(owner));
    const stopped = await call(api.handler, 'GET', '/agents', as(owner, { query: { status: 'stopped' } }));
    const page = await call(
      api.handler,
      'GET',
      '/agents',
      as(owner, { query: { status: 'idle,stopped', limit: '2', offset: '1' } }),
    );
    const unknown = await call(api.handler, 'GET', '/agents', as(owner, { query: { status: 'idle,sleeping' } }));

    // Assess
    expect(all.status).toBe(200);
    expect(all.body.data.map((agent: { name: string }) => agent.name)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
    expect(all.body.meta).toEqual({ total: 4, limit: 50, offset: 0 });
    expect(all.body.data[0].automations).toEqual([
      { id: expect.any(Number), name: 'alpha-tick', type: 'schedule', status: 'active' },
    ]);
    expect(stopped.body.data.map((agent: { name: string }) => agent.name)).toEqual(['beta', 'delta']);
    expect(page.body.data.map((agent: { name: string }) => agent.name)).toEqual(['beta', 'gamma']);
    expect(page.body.meta).toEqual({ total: 4, limit: 2, offset: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual(invalid('query.status'));
  });

  it('shows the completion rate and this month’s budget use from the record', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();
    const agent = await createAgent(api, owner, { name: 'worker', monthly_token_budget: 10_000 });
    const stale = await createAgent(api, owner, { name: 'last-month', monthly_token_budget: 10_000 });
    const figures = (id: number, month: string) =>
      table.update({
        Key: agentKeys.byId(owner.orgId, id),
        UpdateExpression:
          'SET tasks_completed = :c, tasks_failed = :f, tokens_used = :t, budget_month = :m, budget_used = :u',
        ExpressionAttributeValues: { ':c': 3, ':f': 1, ':t': 12_000, ':m': month, ':u': 2_500 },
      });
    await figures(agent.id, NOW.toISOString().slice(0, 7));
    await figures(stale.id, '2000-01');

    // Act
    const response = await call(api.handler, 'GET', '/agents', as(owner));

    // Assess
    const [worker, lastMonth] = response.body.data;
    expect(worker).toMatchObject({
      completion_rate: 0.75,
      tasks_completed: 3,
      tasks_failed: 1,
      tokens_used: 12_000,
      budget: { monthly_token_budget: 10_000, month: NOW.toISOString().slice(0, 7), used: 2_500, remaining: 7_500 },
    });
    expect(lastMonth.budget).toEqual({
      monthly_token_budget: 10_000,
      month: NOW.toISOString().slice(0, 7),
      used: 0,
      remaining: 10_000,
    });
  });
});

describe('POST /agents/{name}/stop, start and restart', () => {
  it('stops, starts and restarts an agent, its schedule and automation following, each change logged', async () => {
    // Prepare
    const owner = await newUser('owner');
    // A clock of its own, moved a second between the changes, so that their entries sort in order.
    const ticking = fixedClock(NOW);
    const api = agentsApi(recordingScheduler(), { clock: ticking });
    const agent = await createAgent(api, owner, { name: 'cycler', interval_sec: 120 });
    const schedule = agentScheduleName(owner.orgId, agent.id);

    // Act
    ticking.advance(1000);
    const stopped = await control(api, owner, 'cycler', 'stop', { note: 'maintenance window' });
    ticking.advance(1000);
    const started = await control(api, owner, 'cycler', 'start');
    ticking.advance(1000);
    const restarted = await control(api, owner, 'cycler', 'restart', { note: 'new model' });

    // Assess
    expect(stopped.status).toBe(200);
    expect(stopped.body.meta).toEqual({ action: 'stop', note: 'maintenance window' });
    expect(stopped.body.data).toMatchObject({
      status: 'stopped',
      schedule: { enabled: false, next_runs: [] },
      automations: [{ name: 'cycler-tick', status: 'disabled' }],
    });
    expect(started.status).toBe(200);
    expect(started.body.meta).toEqual({ action: 'start', note: null });
    expect(started.body.data).toMatchObject({
      status: 'idle',
      schedule: { enabled: true, next_runs: [at(120), at(240), at(360)] },
      automations: [{ name: 'cycler-tick', status: 'active' }],
    });
    expect(restarted.status).toBe(200);
    expect(restarted.body.data).toMatchObject({ status: 'idle', last_error: null, schedule: { enabled: true } });
    expect(api.scheduler.callsFor(schedule).slice(1)).toEqual([
      { op: 'setEnabled', name: schedule, enabled: false },
      { op: 'setEnabled', name: schedule, enabled: true },
      { op: 'setEnabled', name: schedule, enabled: false },
      { op: 'setEnabled', name: schedule, enabled: true },
    ]);
    expect(api.scheduler.schedules.get(schedule)?.enabled).toBe(true);
    const activity = await activityOf(owner.orgId);
    expect(activity.filter((entry) => entry.entity_type === 'agent').map((entry) => entry.action)).toEqual([
      'agent.created',
      'agent.stopped',
      'agent.started',
      'agent.restarted',
    ]);
    expect(activity.find((entry) => entry.action === 'agent.stopped')?.metadata).toEqual({
      name: 'cycler',
      note: 'maintenance window',
      from: 'idle',
      to: 'stopped',
    });
    expect((await logMessagesOf(owner.orgId)).slice(2)).toEqual([
      'agent cycler stopped: maintenance window',
      'agent cycler started',
      'agent cycler restarted: new model',
    ]);
  });

  it('changes the status of an agent without a schedule and calls no scheduler', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();
    await createAgent(api, owner, { name: 'manual' });

    // Act
    const stopped = await control(api, owner, 'manual', 'stop');
    const started = await control(api, owner, 'manual', 'start', {});

    // Assess
    expect([stopped.status, stopped.body.data.status]).toEqual([200, 'stopped']);
    expect([started.status, started.body.data.status]).toEqual([200, 'idle']);
    expect(started.body.data.schedule).toBeNull();
    expect(api.scheduler.calls).toEqual([]);
  });

  it('keeps an agent that is mid-run active on start', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();
    const agent = await createAgent(api, owner, { name: 'busy', interval_sec: 60 });
    await table.update({
      Key: agentKeys.byId(owner.orgId, agent.id),
      UpdateExpression: 'SET #status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':active': 'active' },
    });

    // Act
    const started = await control(api, owner, 'busy', 'start');

    // Assess
    expect(started.body.data.status).toBe('active');
  });

  it('still stops an agent whose schedule cannot be disabled, and puts a failed start in error', async () => {
    // Prepare
    const owner = await newUser('owner');
    const working = agentsApi();
    const broken = agentsApi(recordingScheduler({ failing: ['setEnabled'], message: 'scheduler is down' }));
    await createAgent(working, owner, { name: 'stubborn', interval_sec: 60 });

    // Act
    const stopped = await control(broken, owner, 'stubborn', 'stop');
    const started = await control(broken, owner, 'stubborn', 'start');

    // Assess
    expect(stopped.status).toBe(200);
    expect(stopped.body.data).toMatchObject({
      status: 'stopped',
      schedule: { enabled: true },
      last_error: 'schedule could not be disabled: scheduler is down',
    });
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({
      status: 'error',
      schedule: { enabled: false, next_runs: [] },
      last_error: 'schedule could not be enabled: scheduler is down',
      automations: [{ name: 'stubborn-tick', status: 'disabled' }],
    });
    expect(await logMessagesOf(owner.orgId)).toContain(
      'agent stubborn: schedule could not be enabled: scheduler is down',
    );
  });

  it('answers 404 for an unknown agent and 400 for an invalid name', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();

    // Act
    const unknown = await control(api, owner, 'nobody', 'stop');
    const invalidName = await control(api, owner, 'Not_A_Name', 'start');
    const badNote = await control(api, owner, 'nobody', 'restart', { note: 'x'.repeat(501) });

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
    expect(invalidName.status).toBe(400);
    expect(invalidName.body).toEqual(invalid('params.name'));
    expect(badNote.status).toBe(400);
    expect(badNote.body).toEqual(invalid('body.note'));
  });
});

describe('the public agents API', () => {
  it('creates, lists, reads, updates and takes offline the same records /agents shows', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();

    // Act
    const created = await call(
      api.handler,
      'POST',
      '/v1/public/agents',
      as(owner, { body: { name: 'scout', role: 'Researcher', emoji: '🔎', workspace_path: 'work/scout' } }),
    );
    const id = created.body.data.id;
    const fetched = await call(api.handler, 'GET', `/v1/public/agents/${id}`, as(owner));
    const patched = await call(
      api.handler,
      'PATCH',
      `/v1/public/agents/${id}`,
      as(owner, { body: { current_task: 'Survey the market', status: 'working', emoji: null } }),
    );
    const deleted = await call(api.handler, 'DELETE', `/v1/public/agents/${id}`, as(owner));
    const operational = await call(api.handler, 'GET', '/agents', as(owner));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.any(Number),
      name: 'scout',
      role: 'Researcher',
      emoji: '🔎',
      status: 'idle',
      workspace_path: 'work/scout',
      current_task: null,
      display_name: null,
      model: null,
      last_heartbeat: NOW.toISOString(),
      created_at: NOW.toISOString(),
      updated_at: NOW.toISOString(),
    });
    expect(fetched.body).toEqual({ data: created.body.data });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ status: 'working', current_task: 'Survey the market', emoji: null });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({
      data: expect.objectContaining({ id, status: 'offline' }),
      meta: { deleted: false, status: 'offline' },
    });
    expect(operational.body.data).toEqual([
      expect.objectContaining({
        id,
        name: 'scout',
        role: 'Researcher',
        status: 'offline',
        current_task: 'Survey the market',
      }),
    ]);
    expect(await actionsOf(owner.orgId)).toEqual(
      expect.arrayContaining(['agent.created', 'agent.updated', 'agent.offline']),
    );
  });

  it('filters the list by public status and by role', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();
    const create = (body: Record<string, unknown>) =>
      call(api.handler, 'POST', '/v1/public/agents', as(owner, { body }));
    await create({ name: 'one', role: 'writer' });
    await create({ name: 'two', role: 'Writer', status: 'paused' });
    await create({ name: 'three', role: 'tester', status: 'blocked' });

    // Act
    const writers = await call(api.handler, 'GET', '/v1/public/agents', as(owner, { query: { role: 'WRITER' } }));
    const paused = await call(api.handler, 'GET', '/v1/public/agents', as(owner, { query: { status: 'paused' } }));
    const some = await call(
      api.handler,
      'GET',
      '/v1/public/agents',
      as(owner, { query: { status: 'idle,blocked', limit: '1', offset: '1' } }),
    );
    const operationalStopped = await call(api.handler, 'GET', '/agents', as(owner, { query: { status: 'stopped' } }));
    const unknown = await call(api.handler, 'GET', '/v1/public/agents', as(owner, { query: { status: 'stopped' } }));

    // Assess
    expect(writers.body.data.map((agent: { name: string }) => agent.name)).toEqual(['one', 'two']);
    expect(paused.body.data.map((agent: { name: string; status: string }) => [agent.name, agent.status])).toEqual([
      ['two', 'paused'],
    ]);
    expect(some.body.data.map((agent: { name: string }) => agent.name)).toEqual(['three']);
    expect(some.body.meta).toEqual({ total: 2, limit: 1, offset: 1 });
    expect(operationalStopped.body.data.map((agent: { name: string }) => agent.name)).toEqual(['two']);
    expect(unknown.status).toBe(400);
  });

  it('disables the schedule on paused and enables it again on idle', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();
    const agent = await createAgent(api, owner, { name: 'ticker', interval_sec: 30 });
    const schedule = agentScheduleName(owner.orgId, agent.id);

    // Act
    const paused = await call(
      api.handler,
      'PATCH',
      `/v1/public/agents/${agent.id}`,
      as(owner, { body: { status: 'paused' } }),
    );
    const whilePaused = api.scheduler.schedules.get(schedule)?.enabled;
    const resumed = await call(
      api.handler,
      'PATCH',
      `/v1/public/agents/${agent.id}`,
      as(owner, { body: { status: 'idle' } }),
    );
    const same = await call(
      api.handler,
      'PATCH',
      `/v1/public/agents/${agent.id}`,
      as(owner, { body: { status: 'idle' } }),
    );
    const offline = await call(api.handler, 'DELETE', `/v1/public/agents/${agent.id}`, as(owner));
    const listed = await call(api.handler, 'GET', '/agents', as(owner));

    // Assess
    expect(paused.body.data.status).toBe('paused');
    expect(whilePaused).toBe(false);
    expect(resumed.body.data.status).toBe('idle');
    expect(same.body.data.updated_at).toBe(resumed.body.data.updated_at);
    expect(offline.body.data.status).toBe('offline');
    expect(api.scheduler.callsFor(schedule).slice(1)).toEqual([
      { op: 'setEnabled', name: schedule, enabled: false },
      { op: 'setEnabled', name: schedule, enabled: true },
      { op: 'setEnabled', name: schedule, enabled: false },
    ]);
    expect(listed.body.data[0]).toMatchObject({
      status: 'offline',
      schedule: { enabled: false },
      automations: [{ status: 'disabled' }],
    });
  });

  it('answers 400 without a role or with an invalid name, 409 for a taken name, 404 for an unknown id', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = agentsApi();
    await createAgent(api, owner, { name: 'exists' });

    // Act
    const noRole = await call(api.handler, 'POST', '/v1/public/agents', as(owner, { body: { name: 'norole' } }));
    const badName = await call(
      api.handler,
      'POST',
      '/v1/public/agents',
      as(owner, { body: { name: 'Bad', role: 'r' } }),
    );
    const taken = await call(
      api.handler,
      'POST',
      '/v1/public/agents',
      as(owner, { body: { name: 'exists', role: 'r' } }),
    );
    const missing = await Promise.all([
      call(api.handler, 'GET', '/v1/public/agents/999999', as(owner)),
      call(api.handler, 'PATCH', '/v1/public/agents/999999', as(owner, { body: { role: 'r' } })),
      call(api.handler, 'DELETE', '/v1/public/agents/999999', as(owner)),
    ]);
    const emptyPatch = await call(api.handler, 'PATCH', '/v1/public/agents/1', as(owner, { body: {} }));

    // Assess
    expect([noRole.status, noRole.body]).toEqual([400, invalid('body.role')]);
    expect([badName.status, badName.body]).toEqual([400, invalid('body.name')]);
    expect(taken.status).toBe(409);
    expect(missing.map((response: CallResult) => [response.status, response.body])).toEqual([
      [404, notFound],
      [404, notFound],
      [404, notFound],
    ]);
    expect(emptyPatch.status).toBe(400);
  });
});

describe('tenancy', () => {
  it('answers 404 to another organization for every route of an agent, and changes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const api = agentsApi();
    const agent = await createAgent(api, owner, { name: 'private', interval_sec: 60 });
    const callsBefore = api.scheduler.calls.length;

    // Act
    const responses = await Promise.all([
      control(api, stranger, 'private', 'stop'),
      control(api, stranger, 'private', 'start'),
      control(api, stranger, 'private', 'restart'),
      call(api.handler, 'GET', `/v1/public/agents/${agent.id}`, as(stranger)),
      call(api.handler, 'PATCH', `/v1/public/agents/${agent.id}`, as(stranger, { body: { status: 'paused' } })),
      call(api.handler, 'DELETE', `/v1/public/agents/${agent.id}`, as(stranger)),
    ]);
    const strangersList = await call(api.handler, 'GET', '/agents', as(stranger));
    const strangersPublicList = await call(api.handler, 'GET', '/v1/public/agents', as(stranger));
    const ownersView = await call(api.handler, 'GET', `/v1/public/agents/${agent.id}`, as(owner));

    // Assess
    expect(responses.map((response) => response.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(strangersList.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(strangersPublicList.body.data).toEqual([]);
    expect(ownersView.body.data).toMatchObject({ status: 'idle', updated_at: agent.updated_at });
    expect(api.scheduler.calls.length).toBe(callsBefore);
  });
});
