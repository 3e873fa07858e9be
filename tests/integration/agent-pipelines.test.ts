import { beforeAll, describe, expect, it } from 'vitest';
import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { agentTemplatesHandler } from '#functions/http/agent-templates';
import { fixedClock } from '#lib/kernel/clock';
import { activityOf } from '#tests/support/activity';
import { seedAgent } from '#tests/support/agents';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';

const clock = fixedClock(new Date('2026-03-02T09:00:00.000Z'));
const pipelines = agentPipelinesHandler({ ports: { clock } });
const templates = agentTemplatesHandler({ ports: { clock } });

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps the others ordinary.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

const stage = (name: string, dependsOn: string[] = [], config: Record<string, unknown> = {}, agent = 'qa-tester') => ({
  name,
  agent,
  depends_on: dependsOn,
  config,
});

const diamond = () => [
  stage('a', [], { prompt: 'Plan {{input.feature}}' }),
  stage('b', ['a']),
  stage('c', ['a']),
  stage('d', ['b', 'c'], { prompt: 'Summarize {{a.summary}} for {{pipeline_name}}' }),
];

async function create(user: TestUser, body: Record<string, unknown>) {
  const response = await call(pipelines, 'POST', '/agent-pipelines', as(user, { body }));
  if (response.status !== 201) throw new Error(`create pipeline failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; name: string; stages: Array<Record<string, unknown>> };
}

const detailsOf = (response: { body: { error: { details: Array<{ path: string; message: string }> } } }) =>
  response.body.error.details;

describe('creating a pipeline', () => {
  it('accepts a diamond whose last stage references the first, and reads it back', async () => {
    // Prepare
    const user = await newUser('maker');

    // Act
    const created = await call(
      pipelines,
      'POST',
      '/agent-pipelines',
      as(user, { body: { name: 'Diamond', description: 'Fan out, fan in', stages: diamond() } }),
    );
    const read = await call(pipelines, 'GET', `/agent-pipelines/${created.body.data.id}`, as(user));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.any(Number),
      name: 'Diamond',
      description: 'Fan out, fan in',
      stages: diamond().map((item, at) => ({ ...item, order: at + 1 })),
      created_at: '2026-03-02T09:00:00.000Z',
      updated_at: '2026-03-02T09:00:00.000Z',
    });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(created.body.data);
  });

  it('accepts an agent of the organization as a stage agent', async () => {
    // Prepare
    const user = await newUser('agentowner');
    await seedAgent(user.orgId, { name: 'builder' });

    // Act
    const response = await call(
      pipelines,
      'POST',
      '/agent-pipelines',
      as(user, { body: { name: 'With agent', stages: [stage('build', [], {}, 'builder')] } }),
    );

    // Assess
    expect(response.status).toBe(201);
  });

  it.each([
    ['duplicate stage names', [stage('a'), stage('a')], 'body.stages[1].name', /stages\[0\]/],
    ['an unknown dependency', [stage('a', ['ghost'])], 'body.stages[0].depends_on[0]', /"ghost"/],
    ['a self-dependency', [stage('a', ['a'])], 'body.stages[0].depends_on[0]', /itself/],
    [
      'a cycle',
      [stage('a', ['c']), stage('b', ['a']), stage('c', ['b'])],
      'body.stages[0].depends_on',
      /a → c → b → a/,
    ],
    ['an unknown agent', [stage('a', [], {}, 'nobody-here')], 'body.stages[0].agent', /"nobody-here"/],
    [
      'a reference to a stage that is not an ancestor',
      [stage('a'), stage('b', ['a']), stage('c', ['a'], { prompt: '{{b.summary}}' })],
      'body.stages[2].config.prompt',
      /\{\{b\.summary\}\}.*"b".*not an ancestor/,
    ],
    ['an unknown variable', [stage('a', [], { prompt: 'Hi {{foo}}' })], 'body.stages[0].config.prompt', /\{\{foo\}\}/],
    ['no stages', [], 'body.stages', /at least one/],
  ])('refuses %s (400 naming it)', async (_case, stages, path, message) => {
    // Prepare
    const user = await newUser('invalid');

    // Act
    const response = await call(pipelines, 'POST', '/agent-pipelines', as(user, { body: { name: 'Bad', stages } }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(detailsOf(response)).toEqual([expect.objectContaining({ path, message: expect.stringMatching(message) })]);
  });

  it('refuses more than 200 stages', async () => {
    // Prepare
    const user = await newUser('many');
    const stages = Array.from({ length: 201 }, (_, at) => stage(`s${at}`));

    // Act
    const response = await call(pipelines, 'POST', '/agent-pipelines', as(user, { body: { name: 'Many', stages } }));

    // Assess
    expect(response.status).toBe(400);
    expect(detailsOf(response).map((detail) => detail.path)).toEqual(['body.stages']);
  });

  it('refuses an archived template, accepts an active one, names each unknown agent per stage', async () => {
    // Prepare
    const user = await newUser('archived');
    const own = await call(
      templates,
      'POST',
      '/v1/public/templates',
      as(user, { body: { name: 'Own', slug: 'own-bot' } }),
    );
    await call(templates, 'DELETE', `/v1/public/templates/${own.body.data.id}`, as(user));
    const stages = [stage('a', [], {}, 'ghost-one'), stage('b', [], {}, 'own-bot'), stage('c', [], {}, 'ghost-one')];

    // Act
    const response = await call(pipelines, 'POST', '/agent-pipelines', as(user, { body: { name: 'Ghosts', stages } }));

    // Assess
    expect(response.status).toBe(400);
    expect(detailsOf(response).map((detail) => detail.path)).toEqual([
      'body.stages[0].agent',
      'body.stages[1].agent',
      'body.stages[2].agent',
    ]);
    await call(templates, 'POST', '/v1/public/templates', as(user, { body: { name: 'Live', slug: 'live-bot' } }));
    const active = await call(
      pipelines,
      'POST',
      '/agent-pipelines',
      as(user, { body: { name: 'Live', stages: [stage('a', [], {}, 'live-bot')] } }),
    );
    expect(active.status).toBe(201);
  });

  it('answers 409 for a name the organization has, in any case, and one 201 of two concurrent creates', async () => {
    // Prepare
    const user = await newUser('names');
    await create(user, { name: 'Release', stages: [stage('a')] });

    // Act
    const again = await call(
      pipelines,
      'POST',
      '/agent-pipelines',
      as(user, { body: { name: 'release', stages: [stage('a')] } }),
    );
    const racing = await Promise.all(
      [1, 2].map(() =>
        call(pipelines, 'POST', '/agent-pipelines', as(user, { body: { name: 'Race', stages: [stage('a')] } })),
      ),
    );

    // Assess
    expect(again.status).toBe(409);
    expect(racing.map((response) => response.status).sort()).toEqual([201, 409]);
    const list = await call(pipelines, 'GET', '/agent-pipelines', as(user));
    expect(list.body.data.map((item: { name: string }) => item.name)).toEqual(['Release', 'Race']);
  });
});

describe('a pipeline', () => {
  it('lists oldest first, paged', async () => {
    // Prepare
    const user = await newUser('lister');
    for (const name of ['One', 'Two', 'Three']) await create(user, { name, stages: [stage('a')] });

    // Act
    const page = await call(pipelines, 'GET', '/agent-pipelines', as(user, { query: { limit: '2', offset: '1' } }));

    // Assess
    expect(page.status).toBe(200);
    expect(page.body.data.map((item: { name: string }) => item.name)).toEqual(['Two', 'Three']);
    expect(page.body.meta).toEqual({ total: 3, limit: 2, offset: 1 });
  });

  it('changes by PATCH: stages replaced and revalidated, the name guard moved', async () => {
    // Prepare
    const user = await newUser('patcher');
    const pipeline = await create(user, { name: 'Old name', stages: [stage('a')] });

    // Act
    const invalid = await call(
      pipelines,
      'PATCH',
      `/agent-pipelines/${pipeline.id}`,
      as(user, { body: { stages: [stage('a', ['b'])] } }),
    );
    const patched = await call(
      pipelines,
      'PATCH',
      `/agent-pipelines/${pipeline.id}`,
      as(user, { body: { name: 'New name', stages: diamond() } }),
    );
    const oldNameAgain = await call(
      pipelines,
      'POST',
      '/agent-pipelines',
      as(user, { body: { name: 'Old name', stages: [stage('a')] } }),
    );
    const newNameTaken = await call(
      pipelines,
      'POST',
      '/agent-pipelines',
      as(user, { body: { name: 'NEW NAME', stages: [stage('a')] } }),
    );

    // Assess
    expect(invalid.status).toBe(400);
    expect(detailsOf(invalid)[0]?.path).toBe('body.stages[0].depends_on[0]');
    expect(patched.status).toBe(200);
    expect(patched.body.data.name).toBe('New name');
    expect(patched.body.data.stages.map((item: { name: string }) => item.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(oldNameAgain.status).toBe(201);
    expect(newNameTaken.status).toBe(409);
  });

  it('refuses a rename to a name another pipeline has (409)', async () => {
    // Prepare
    const user = await newUser('renamer');
    await create(user, { name: 'Taken', stages: [stage('a')] });
    const other = await create(user, { name: 'Other', stages: [stage('a')] });

    // Act
    const response = await call(
      pipelines,
      'PATCH',
      `/agent-pipelines/${other.id}`,
      as(user, { body: { name: 'taken' } }),
    );

    // Assess
    expect(response.status).toBe(409);
    const read = await call(pipelines, 'GET', `/agent-pipelines/${other.id}`, as(user));
    expect(read.body.data.name).toBe('Other');
  });

  it('is deleted with its name freed, and records each write in the activity log', async () => {
    // Prepare
    const user = await newUser('deleter');
    const pipeline = await create(user, { name: 'Short-lived', stages: [stage('a')] });
    await call(pipelines, 'PATCH', `/agent-pipelines/${pipeline.id}`, as(user, { body: { description: 'x' } }));

    // Act
    const deleted = await call(pipelines, 'DELETE', `/agent-pipelines/${pipeline.id}`, as(user));
    const after = await call(pipelines, 'GET', `/agent-pipelines/${pipeline.id}`, as(user));
    const sameName = await call(
      pipelines,
      'POST',
      '/agent-pipelines',
      as(user, { body: { name: 'Short-lived', stages: [stage('a')] } }),
    );

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: expect.objectContaining({ id: pipeline.id }), meta: { deleted: true } });
    expect(after.status).toBe(404);
    expect(sameName.status).toBe(201);
    const Items = await activityOf(user.orgId);
    const actions = Items.filter((item) => item.entity_id === String(pipeline.id)).map((item) => item.action);
    expect(actions.sort()).toEqual(['pipeline.created', 'pipeline.deleted', 'pipeline.updated']);
  });

  it('is 404 to another organization, for reading, changing and deleting', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const pipeline = await create(owner, { name: 'Private', stages: [stage('a')] });

    // Act
    const responses = await Promise.all([
      call(pipelines, 'GET', `/agent-pipelines/${pipeline.id}`, as(stranger)),
      call(pipelines, 'PATCH', `/agent-pipelines/${pipeline.id}`, as(stranger, { body: { name: 'Mine' } })),
      call(pipelines, 'DELETE', `/agent-pipelines/${pipeline.id}`, as(stranger)),
    ]);

    // Assess
    expect(responses.map((response) => response.status)).toEqual([404, 404, 404]);
    const list = await call(pipelines, 'GET', '/agent-pipelines', as(stranger));
    expect(list.body.meta.total).toBe(0);
  });
});

describe('pipeline templates', () => {
  it('lists the built-in templates with their inputs', async () => {
    // Prepare
    const user = await newUser('browser');

    // Act
    const response = await call(pipelines, 'GET', '/agent-pipelines/templates', as(user));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.map((item: { id: string }) => item.id)).toEqual([
      'feature-delivery',
      'data-collection',
      'incident-response',
    ]);
    expect(response.body.data[0].inputs.map((input: { name: string }) => input.name)).toEqual([
      'feature',
      'repository',
    ]);
  });

  it('clones a template into the organization, which lists it; a second clone of the name is 409', async () => {
    // Prepare
    const user = await newUser('cloner');

    // Act
    const cloned = await call(
      pipelines,
      'POST',
      '/agent-pipelines/templates/incident-response/clone',
      as(user, { body: { name: 'On call' } }),
    );
    const again = await call(
      pipelines,
      'POST',
      '/agent-pipelines/templates/feature-delivery/clone',
      as(user, { body: { name: 'On call' } }),
    );
    const unknown = await call(
      pipelines,
      'POST',
      '/agent-pipelines/templates/no-such-template/clone',
      as(user, { body: { name: 'Whatever' } }),
    );

    // Assess
    expect(cloned.status).toBe(201);
    expect(cloned.body.data.stages.map((item: { name: string }) => item.name)).toEqual([
      'triage',
      'diagnose',
      'communicate',
      'fix',
      'postmortem',
    ]);
    expect(again.status).toBe(409);
    expect(unknown.status).toBe(404);
    const list = await call(pipelines, 'GET', '/agent-pipelines', as(user));
    expect(list.body.data.map((item: { id: number }) => item.id)).toEqual([cloned.body.data.id]);
  });
});
