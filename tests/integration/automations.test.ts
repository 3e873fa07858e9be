import { beforeAll, describe, expect, it } from 'vitest';
import { agentsHandler } from '#functions/http/agents';
import { handler as automations } from '#functions/http/automations';
import { automationKeys } from '#lib/automations/automation-keys';
import { automationReplaceWrites, getAutomationById, newAutomationWrites } from '#lib/automations/automation-records';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { activityOf } from '#tests/support/activity';
import { seedAgent } from '#tests/support/agents';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import { recordingScheduler } from '#tests/support/scheduler';

/**
 * GET, POST, PATCH and DELETE /automations against DynamoDB Local: the records, their live status read
 * from the agents, the tick automations agents bring (managed by the agent), filters, versioned writes,
 * activity entries and tenancy.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps every other
  // user an ordinary one.
  await newUser('instanceadmin');
});

const agents = agentsHandler({ ports: { scheduler: recordingScheduler() } });
const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function createAgent(user: TestUser, body: Record<string, unknown>) {
  const response = await call(agents, 'POST', '/agents', as(user, { body }));
  if (response.status !== 200) throw new Error(`create agent failed: ${JSON.stringify(response.body)}`);
  return response.body.data.agent as { id: number; name: string; automations: Array<{ id: number }> };
}

const body = (fields: Record<string, unknown> = {}) => ({
  name: 'Nightly report',
  agent_name: 'reporter',
  type: 'script',
  path: 'agents/reporter/scripts/report.sh',
  ...fields,
});

async function createAutomation(user: TestUser, fields: Record<string, unknown> = {}) {
  const response = await call(automations, 'POST', '/automations', as(user, { body: body(fields) }));
  if (response.status !== 201) throw new Error(`create automation failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; [field: string]: unknown };
}

const invalid = (path: string) => ({
  error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: [{ path, message: expect.any(String) }] },
});

const notFound = { error: { code: 'NOT_FOUND', message: 'Automation not found', details: [] } };

describe('POST /automations', () => {
  it('creates an active automation shown with its agent’s live status, and records it', async () => {
    // Prepare
    const owner = await newUser('owner');
    await seedAgent(owner.orgId, { name: 'reporter', status: 'idle', last_run_at: '2030-01-01T00:00:00.000Z' });

    // Act
    const created = await call(automations, 'POST', '/automations', as(owner, { body: body({ type: 'Script' }) }));
    const fetched = await call(automations, 'GET', `/automations/${created.body.data?.id}`, as(owner));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      data: {
        id: expect.any(Number),
        name: 'Nightly report',
        agent_name: 'reporter',
        type: 'script',
        path: 'agents/reporter/scripts/report.sh',
        label: null,
        status: 'active',
        managed: false,
        live_status: 'waiting',
        agent_status: 'idle',
        agent_last_run_at: '2030-01-01T00:00:00.000Z',
        schedule_enabled: null,
        created_at: expect.any(String),
        updated_at: created.body.data.created_at,
      },
    });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
    const entries = (await activityOf(owner.orgId)).filter((entry) => entry.entity_type === 'automation');
    expect(entries).toMatchObject([
      {
        action: 'automation.created',
        entity_id: String(created.body.data.id),
        metadata: { name: 'Nightly report', agent_name: 'reporter' },
      },
    ]);
  });

  it('answers 400 for an agent the organization does not have, and writes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const other = await newUser('other');
    await seedAgent(other.orgId, { name: 'reporter' });

    // Act
    const response = await call(automations, 'POST', '/automations', as(owner, { body: body() }));
    const list = await call(automations, 'GET', '/automations', as(owner));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('body.agent_name'));
    expect(list.body.meta.total).toBe(0);
  });

  it.each([
    ['name', { name: undefined }],
    ['agent_name', { agent_name: undefined }],
    ['type', { type: undefined }],
    ['path', { path: undefined }],
    ['path', { path: '/etc/cron.d/report' }],
    ['path', { path: 'agents/../../secrets' }],
    ['status', { status: 'paused' }],
  ])('answers 400 naming body.%s for %j', async (field, fields) => {
    // Prepare
    const owner = await newUser('owner');
    await seedAgent(owner.orgId, { name: 'reporter' });

    // Act
    const response = await call(automations, 'POST', '/automations', as(owner, { body: body(fields) }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.details).toContainEqual({ path: `body.${field}`, message: expect.any(String) });
  });
});

describe('GET /automations', () => {
  it('lists the organization’s automations oldest first, ticks included, filtered and paged', async () => {
    // Prepare
    const owner = await newUser('owner');
    const builder = await createAgent(owner, { name: 'builder', interval_sec: 300 });
    await seedAgent(owner.orgId, { name: 'reporter' });
    const report = await createAutomation(owner, { label: 'Mails the PDF' });
    const hook = await createAutomation(owner, {
      name: 'Deploy hook',
      agent_name: 'builder',
      type: 'hook',
      path: 'agents/builder/hooks/deploy.ts',
      status: 'inactive',
    });
    const sweep = await createAutomation(owner, { name: 'Sweep', status: 'disabled' });
    const tickId = builder.automations[0]?.id;
    const list = (query: Record<string, string>) => call(automations, 'GET', '/automations', as(owner, { query }));
    const ids = (response: { body: { data: Array<{ id: number }> } }) => response.body.data.map((item) => item.id);

    // Act
    const all = await list({});
    const ofBuilder = await list({ agent_name: 'builder' });
    const scripts = await list({ type: 'SCRIPT' });
    const notActive = await list({ status: 'inactive,disabled' });
    const byLabel = await list({ q: 'the pdf' });
    const byPath = await list({ q: 'HOOKS/deploy' });
    const combined = await list({ agent_name: 'reporter', status: 'active' });
    const page = await list({ limit: '2', offset: '1' });

    // Assess
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual([tickId, report.id, hook.id, sweep.id]);
    expect(all.body.meta).toEqual({ total: 4, limit: 50, offset: 0 });
    expect(all.body.data[0]).toMatchObject({
      name: 'builder-tick',
      agent_name: 'builder',
      type: 'schedule',
      path: 'functions/schedule/agent-tick',
      status: 'active',
      managed: true,
      live_status: 'waiting',
      agent_status: 'idle',
      schedule_enabled: true,
    });
    expect(ids(ofBuilder)).toEqual([tickId, hook.id]);
    expect(ids(scripts)).toEqual([report.id, sweep.id]);
    expect(ids(notActive)).toEqual([hook.id, sweep.id]);
    expect(notActive.body.data.map((item: { live_status: string }) => item.live_status)).toEqual(['off', 'off']);
    expect(ids(byLabel)).toEqual([report.id]);
    expect(ids(byPath)).toEqual([hook.id]);
    expect(ids(combined)).toEqual([report.id]);
    expect(ids(page)).toEqual([report.id, hook.id]);
    expect(page.body.meta).toEqual({ total: 4, limit: 2, offset: 1 });
  });

  it('answers 400 for q over 100 characters, and for an unknown status', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const longest = await call(automations, 'GET', '/automations', as(owner, { query: { q: 'x'.repeat(100) } }));
    const tooLong = await call(automations, 'GET', '/automations', as(owner, { query: { q: 'x'.repeat(101) } }));
    const unknown = await call(automations, 'GET', '/automations', as(owner, { query: { status: 'running' } }));

    // Assess
    expect(longest.status).toBe(200);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual(invalid('query.q'));
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual(invalid('query.status'));
  });

  it('shows the live status from each agent’s state', async () => {
    // Prepare
    const owner = await newUser('owner');
    await seedAgent(owner.orgId, { name: 'busy', status: 'active' });
    await seedAgent(owner.orgId, { name: 'broken', status: 'error' });
    await seedAgent(owner.orgId, { name: 'halted', status: 'stopped' });
    await seedAgent(owner.orgId, { name: 'gone', status: 'offline' });
    for (const name of ['busy', 'broken', 'halted', 'gone']) await createAutomation(owner, { agent_name: name, name });
    // A record naming an agent that does not exist, as only a write outside the API could leave one.
    const id = 900_000 + Math.floor(Math.random() * 1000);
    const at = new Date().toISOString();
    await transact(
      newAutomationWrites(owner.orgId, {
        ...automationKeys.ofAgentById(owner.orgId, 'nobody', id),
        ...{ id, name: 'orphan', agent_name: 'nobody', type: 'script', path: 'x.sh', label: null, status: 'active' },
        ...{ version: 1, created_at: at, updated_at: at },
      }),
    );

    // Act
    const all = await call(automations, 'GET', '/automations', as(owner));

    // Assess
    expect(
      all.body.data.map((item: { name: string; live_status: string; agent_status: string | null }) => [
        item.name,
        item.live_status,
        item.agent_status,
      ]),
    ).toEqual([
      ['busy', 'running', 'active'],
      ['broken', 'failing', 'error'],
      ['halted', 'paused', 'stopped'],
      ['gone', 'paused', 'offline'],
      ['orphan', 'agent_missing', null],
    ]);
  });

  it('follows a tick automation as its agent stops and starts', async () => {
    // Prepare
    const owner = await newUser('owner');
    const agent = await createAgent(owner, { name: 'cycler', interval_sec: 120 });
    const tickId = agent.automations[0]?.id;

    // Act
    await call(agents, 'POST', '/agents/cycler/stop', as(owner));
    const stopped = await call(automations, 'GET', `/automations/${tickId}`, as(owner));
    await call(agents, 'POST', '/agents/cycler/start', as(owner));
    const started = await call(automations, 'GET', `/automations/${tickId}`, as(owner));

    // Assess
    expect(stopped.body.data).toMatchObject({
      status: 'disabled',
      live_status: 'off',
      agent_status: 'stopped',
      schedule_enabled: false,
    });
    expect(started.body.data).toMatchObject({
      status: 'active',
      live_status: 'waiting',
      agent_status: 'idle',
      schedule_enabled: true,
    });
  });
});

describe('GET /automations/{id}', () => {
  it('answers 404 for an unknown id and 400 for one that is not an integer', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const unknown = await call(automations, 'GET', '/automations/424242', as(owner));
    const word = await call(automations, 'GET', '/automations/report', as(owner));

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
    expect(word.status).toBe(400);
    expect(word.body).toEqual(invalid('params.id'));
  });

  it('finds a tick automation written before id pointers existed', async () => {
    // Prepare
    const owner = await newUser('owner');
    const agent = await createAgent(owner, { name: 'veteran' });
    const tickId = agent.automations[0]?.id as number;
    await table.delete({ Key: automationKeys.idPointer(owner.orgId, tickId) });

    // Act
    const response = await call(automations, 'GET', `/automations/${tickId}`, as(owner));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: tickId, name: 'veteran-tick', managed: true });
  });
});

describe('PATCH /automations/{id}', () => {
  it('changes the fields given, moves the automation to a new agent, and records the change', async () => {
    // Prepare
    const owner = await newUser('owner');
    await seedAgent(owner.orgId, { name: 'reporter' });
    await seedAgent(owner.orgId, { name: 'archivist', status: 'stopped' });
    const created = await createAutomation(owner, { label: 'Mails the PDF' });

    // Act
    const patched = await call(
      automations,
      'PATCH',
      `/automations/${created.id}`,
      as(owner, { body: { agent_name: 'archivist', label: null, status: 'inactive', path: 'agents/a/run.sh' } }),
    );
    const fetched = await call(automations, 'GET', `/automations/${created.id}`, as(owner));
    const ofReporter = await call(automations, 'GET', '/automations', as(owner, { query: { agent_name: 'reporter' } }));
    const ofArchivist = await call(
      automations,
      'GET',
      '/automations',
      as(owner, { query: { agent_name: 'archivist' } }),
    );

    // Assess
    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({
      ...created,
      agent_name: 'archivist',
      label: null,
      status: 'inactive',
      path: 'agents/a/run.sh',
      live_status: 'off',
      agent_status: 'stopped',
      agent_last_run_at: null,
      updated_at: expect.any(String),
    });
    expect(fetched.body).toEqual(patched.body);
    expect(ofReporter.body.meta.total).toBe(0);
    expect(ofArchivist.body.data.map((item: { id: number }) => item.id)).toEqual([created.id]);
    const entries = (await activityOf(owner.orgId)).filter((entry) => entry.action === 'automation.updated');
    expect(entries).toMatchObject([
      { entity_id: String(created.id), metadata: { changed: ['agent_name', 'path', 'label', 'status'] } },
    ]);
  });

  it('writes nothing when no value changes', async () => {
    // Prepare
    const owner = await newUser('owner');
    await seedAgent(owner.orgId, { name: 'reporter' });
    const created = await createAutomation(owner);

    // Act
    const response = await call(
      automations,
      'PATCH',
      `/automations/${created.id}`,
      as(owner, { body: { name: 'Nightly report', type: 'script' } }),
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(created);
    expect((await activityOf(owner.orgId)).map((entry) => entry.action)).not.toContain('automation.updated');
  });

  it('loses neither of two concurrent changes of different fields', async () => {
    // Prepare
    const owner = await newUser('owner');
    await seedAgent(owner.orgId, { name: 'reporter' });
    const created = await createAutomation(owner);
    const patch = (fields: Record<string, unknown>) =>
      call(automations, 'PATCH', `/automations/${created.id}`, as(owner, { body: fields }));

    // Act
    const answers = await Promise.all([patch({ label: 'Weekly' }), patch({ status: 'disabled' })]);
    const fetched = await call(automations, 'GET', `/automations/${created.id}`, as(owner));

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(fetched.body.data).toMatchObject({ label: 'Weekly', status: 'disabled' });
  });

  it('refuses a write based on a version that is no longer the stored one', async () => {
    // Prepare
    const owner = await newUser('owner');
    await seedAgent(owner.orgId, { name: 'reporter' });
    const created = await createAutomation(owner);
    const read = await getAutomationById(owner.orgId, created.id);
    if (!read) throw new Error('automation missing');
    await call(automations, 'PATCH', `/automations/${created.id}`, as(owner, { body: { label: 'first' } }));

    // Act
    const late = transact(automationReplaceWrites(owner.orgId, read, { ...read, label: 'second', version: 2 }));

    // Assess
    await expect(late).rejects.toSatisfy((error) => isConditionFailed(error, 'stale'));
    expect((await getAutomationById(owner.orgId, created.id))?.label).toBe('first');
  });

  it('answers 400 for an unknown agent or an empty body, 404 for an unknown id, 409 for a tick', async () => {
    // Prepare
    const owner = await newUser('owner');
    const agent = await createAgent(owner, { name: 'reporter' });
    const created = await createAutomation(owner);
    const patch = (id: number | undefined, fields: Record<string, unknown>) =>
      call(automations, 'PATCH', `/automations/${id}`, as(owner, { body: fields }));

    // Act
    const unknownAgent = await patch(created.id, { agent_name: 'nobody' });
    const empty = await patch(created.id, {});
    const unknownId = await patch(424242, { label: 'x' });
    const tick = await patch(agent.automations[0]?.id, { status: 'active' });

    // Assess
    expect(unknownAgent.status).toBe(400);
    expect(unknownAgent.body).toEqual(invalid('body.agent_name'));
    expect(empty.status).toBe(400);
    expect(unknownId.status).toBe(404);
    expect(tick.status).toBe(409);
    expect(tick.body.error.details).toEqual([{ path: 'params.id', message: expect.any(String) }]);
  });

  it('keeps an automation named like its agent’s tick out of the tick’s status changes', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createAgent(owner, { name: 'builder', interval_sec: 300 });
    const lookalike = await createAutomation(owner, {
      agent_name: 'builder',
      name: 'builder-tick',
      status: 'inactive',
    });

    // Act
    await call(agents, 'POST', '/agents/builder/stop', as(owner));
    const started = await call(agents, 'POST', '/agents/builder/start', as(owner));
    const fetched = await call(automations, 'GET', `/automations/${lookalike.id}`, as(owner));

    // Assess
    expect(started.body.data.automations).toEqual([
      { id: expect.any(Number), name: 'builder-tick', type: 'schedule', status: 'active' },
      { id: lookalike.id, name: 'builder-tick', type: 'script', status: 'inactive' },
    ]);
    expect(fetched.body.data.status).toBe('inactive');
  });
});

describe('DELETE /automations/{id}', () => {
  it('deletes the automation, answers it as it was, and records the deletion', async () => {
    // Prepare
    const owner = await newUser('owner');
    await seedAgent(owner.orgId, { name: 'reporter' });
    const created = await createAutomation(owner);

    // Act
    const deleted = await call(automations, 'DELETE', `/automations/${created.id}`, as(owner));
    const fetched = await call(automations, 'GET', `/automations/${created.id}`, as(owner));
    const again = await call(automations, 'DELETE', `/automations/${created.id}`, as(owner));

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: created, meta: { deleted: true } });
    expect(fetched.status).toBe(404);
    expect(again.status).toBe(404);
    expect((await call(automations, 'GET', '/automations', as(owner))).body.meta.total).toBe(0);
    expect((await table.get({ Key: automationKeys.idPointer(owner.orgId, created.id) })).Item).toBeUndefined();
    expect((await activityOf(owner.orgId)).map((entry) => entry.action)).toContain('automation.deleted');
  });

  it('answers 409 for a tick automation, which goes with its agent', async () => {
    // Prepare
    const owner = await newUser('owner');
    const agent = await createAgent(owner, { name: 'builder' });

    // Act
    const response = await call(automations, 'DELETE', `/automations/${agent.automations[0]?.id}`, as(owner));

    // Assess
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('CONFLICT');
    expect((await call(automations, 'GET', '/automations', as(owner))).body.meta.total).toBe(1);
  });
});

describe('automations and tenancy', () => {
  it('never shows or changes another organization’s automations', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    await seedAgent(owner.orgId, { name: 'reporter' });
    await seedAgent(stranger.orgId, { name: 'reporter' });
    const created = await createAutomation(owner);

    // Act
    const list = await call(automations, 'GET', '/automations', as(stranger));
    const fetched = await call(automations, 'GET', `/automations/${created.id}`, as(stranger));
    const patched = await call(
      automations,
      'PATCH',
      `/automations/${created.id}`,
      as(stranger, { body: { label: 'x' } }),
    );
    const deleted = await call(automations, 'DELETE', `/automations/${created.id}`, as(stranger));
    const anonymous = await call(automations, 'GET', '/automations');

    // Assess
    expect(list.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect([fetched.status, patched.status, deleted.status]).toEqual([404, 404, 404]);
    expect(fetched.body).toEqual(notFound);
    expect(anonymous.status).toBe(401);
    expect((await call(automations, 'GET', `/automations/${created.id}`, as(owner))).body.data).toEqual(created);
  });
});
