import { beforeAll, describe, expect, it } from 'vitest';
import { agentTemplatesHandler } from '#functions/http/agent-templates';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { fixedClock } from '#lib/kernel/clock';
import { type CallOptions, call, joinOrganization, newUser, type TestUser } from '#tests/support/identity';

const clock = fixedClock(new Date('2026-03-02T09:00:00.000Z'));
const templates = agentTemplatesHandler({ ports: { clock } });

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps the others ordinary.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

const BUILT_IN_SLUGS = ['full-stack-dev', 'api-integrator', 'qa-tester', 'web-scraper', 'devops'];
const LIST_FIELDS = [
  'capabilities',
  'category',
  'description',
  'icon',
  'id',
  'is_featured',
  'model',
  'name',
  'slug',
  'tools',
];
const APPLIED_FIELDS = [
  'capabilities',
  'config',
  'core_rules',
  'display_name',
  'identity',
  'interval_sec',
  'model',
  'name',
  'soul_content',
  'template_name',
  'template_slug',
  'tools',
];

const invalid = (path: string) => ({
  error: {
    code: 'VALIDATION_ERROR',
    message: 'The request is not valid',
    details: [{ path, message: expect.any(String) }],
  },
});

async function createTemplate(user: TestUser, body: Record<string, unknown>) {
  const response = await call(templates, 'POST', '/v1/public/templates', as(user, { body }));
  if (response.status !== 201) throw new Error(`create template failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; slug: string; name: string; created_at: string };
}

const slugsOf = (response: { body: { data: Array<{ slug: string }> } }) => response.body.data.map((item) => item.slug);

describe('the built-in templates', () => {
  it('lists the five built-ins, in display order, with only the list fields', async () => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', '/agent-templates', as(user));

    // Assess
    expect(response.status).toBe(200);
    expect(slugsOf(response)).toEqual(BUILT_IN_SLUGS);
    expect(response.body.data.map((item: { id: number }) => item.id)).toEqual([1, 2, 3, 4, 5]);
    for (const item of response.body.data) expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);
    expect(response.body.meta).toEqual({ total: 5, limit: 50, offset: 0 });
  });

  it.each([
    ['full-stack-dev', 'Full-Stack Dev', 'development', 'gpt-4o', 'standard', 'code'],
    ['api-integrator', 'API Integrator', 'integration', 'gpt-4o', 'standard', 'plug'],
    ['qa-tester', 'QA Tester', 'quality', 'gpt-4o-mini', 'light', 'bug'],
    ['web-scraper', 'Web Scraper', 'data', 'gpt-4o-mini', 'light', 'globe'],
    ['devops', 'DevOps', 'infrastructure', 'gpt-4o', 'standard', 'server'],
  ])('has %s (%s) filled in completely', async (slug, name, category, model, tier, icon) => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', `/agent-templates/${slug}`, as(user));

    // Assess
    expect(response.status).toBe(200);
    const template = response.body.data;
    expect(template).toMatchObject({ slug, name, category, model, icon, built_in: true, status: 'active' });
    expect(template.config).toMatchObject({ model_tier: tier });
    const shortest = { description: 60, identity: 400, soul_content: 400, core_rules: 200 };
    for (const [field, length] of Object.entries(shortest)) {
      expect(template[field].length, field).toBeGreaterThan(length);
    }
    expect(template.soul_content).toMatch(/^# .+\n[\s\S]*\n## /);
    expect(template.core_rules).toMatch(/^1\. .+\n2\. /);
    expect(template.tools.length).toBeGreaterThanOrEqual(3);
    expect(template.capabilities.length).toBeGreaterThanOrEqual(3);
    expect(Number.isInteger(template.interval_sec) && template.interval_sec > 0).toBe(true);
    expect(typeof template.is_featured).toBe('boolean');
    expect(Number.isInteger(template.sort_order)).toBe(true);
    expect(template).toMatchObject({ created_at: null, updated_at: null, archived_at: null });
  });

  it('names the tools of the specification’s table', async () => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', '/agent-templates', as(user));

    // Assess
    const tools = Object.fromEntries(
      response.body.data.map((item: { slug: string; tools: string[] }) => [item.slug, item.tools]),
    );
    expect(tools['full-stack-dev']).toEqual(['file_read', 'file_write', 'git', 'shell']);
    expect(tools['api-integrator']).toEqual(expect.arrayContaining(['http_request', 'credentials', 'file_read']));
    expect(tools['qa-tester']).toEqual(expect.arrayContaining(['test_runner', 'browser', 'file_read']));
    expect(tools['web-scraper']).toEqual(expect.arrayContaining(['http_request', 'file_write', 'data_transform']));
    expect(tools.devops).toEqual(expect.arrayContaining(['shell', 'file_read', 'deploy_api']));
  });
});

describe('GET /agent-templates', () => {
  it.each([
    [{ category: 'quality' }, ['qa-tester']],
    [{ category: 'infrastructure' }, ['devops']],
    [{ featured: 'true' }, ['full-stack-dev', 'api-integrator', 'qa-tester']],
    [{ featured: 'false' }, ['web-scraper', 'devops']],
    [{ search: 'SCRAPER' }, ['web-scraper']],
    [{ search: 'oauth' }, ['api-integrator']],
    [{ search: 'regressions' }, ['qa-tester']],
    [{ search: 'no template says this' }, []],
    [{ category: 'development', featured: 'false' }, []],
  ])('filters by %o', async (query, expected) => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', '/agent-templates', as(user, { query }));

    // Assess
    expect(response.status).toBe(200);
    expect(slugsOf(response)).toEqual(expected);
    expect(response.body.meta.total).toBe(expected.length);
  });

  it.each([
    [{ category: 'marketing' }, 'query.category'],
    [{ featured: 'yes' }, 'query.featured'],
    [{ limit: '-1' }, 'query.limit'],
    [{ offset: 'abc' }, 'query.offset'],
    [{ search: 'x'.repeat(201) }, 'query.search'],
  ])('answers 400 for %o', async (query, path) => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', '/agent-templates', as(user, { query }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(path));
  });

  it('pages with limit and offset and reports them in meta', async () => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const page = await call(templates, 'GET', '/agent-templates', as(user, { query: { limit: '2', offset: '1' } }));
    const clamped = await call(templates, 'GET', '/agent-templates', as(user, { query: { limit: '500' } }));

    // Assess
    expect(slugsOf(page)).toEqual(['api-integrator', 'qa-tester']);
    expect(page.body.meta).toEqual({ total: 5, limit: 2, offset: 1 });
    expect(clamped.body.meta).toEqual({ total: 5, limit: 200, offset: 0 });
  });

  it('adds the organization’s own active templates by sort_order then id, and no one else’s', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const first = await createTemplate(owner, { name: 'Support Scraper', slug: 'support-scraper', sort_order: 35 });
    const last = await createTemplate(owner, { name: 'Late', slug: 'late' });
    const archived = await createTemplate(owner, { name: 'Old Scraper', slug: 'old-scraper' });
    await call(templates, 'DELETE', `/v1/public/templates/${archived.id}`, as(owner));
    await createTemplate(stranger, { name: 'Stranger Scraper', slug: 'stranger-scraper' });

    // Act
    const all = await call(templates, 'GET', '/agent-templates', as(owner));
    const search = await call(templates, 'GET', '/agent-templates', as(owner, { query: { search: 'scraper' } }));

    // Assess
    expect(slugsOf(all)).toEqual([
      'full-stack-dev',
      'api-integrator',
      'qa-tester',
      'support-scraper',
      'web-scraper',
      'devops',
      'late',
    ]);
    expect(all.body.meta.total).toBe(7);
    expect(all.body.data[3]).toMatchObject({ id: first.id });
    expect(all.body.data[6]).toMatchObject({ id: last.id });
    for (const item of all.body.data) expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);
    expect(slugsOf(search)).toEqual(['support-scraper', 'web-scraper']);
  });
});

describe('GET /agent-templates/{idOrSlug}', () => {
  it('answers the same template by id and by slug', async () => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const byId = await call(templates, 'GET', '/agent-templates/3', as(user));
    const bySlug = await call(templates, 'GET', '/agent-templates/qa-tester', as(user));

    // Assess
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(bySlug.body);
    expect(byId.body.data).toMatchObject({ id: 3, slug: 'qa-tester', built_in: true });
  });

  it('reads the organization’s own template by id and slug', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, { name: 'Mine', slug: 'mine' });

    // Act
    const byId = await call(templates, 'GET', `/agent-templates/${created.id}`, as(owner));
    const bySlug = await call(templates, 'GET', '/agent-templates/mine', as(owner));

    // Assess
    expect(byId.status).toBe(200);
    expect(byId.body.data).toMatchObject({ id: created.id, slug: 'mine', built_in: false, status: 'active' });
    expect(bySlug.body).toEqual(byId.body);
  });

  it.each(['no-such-template', '6', '999', '1000', '0', '99999'])('answers 404 for %s', async (ref) => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', `/agent-templates/${ref}`, as(user));

    // Assess
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { code: 'NOT_FOUND', message: 'Template not found', details: [] } });
  });

  it.each(['QA-Tester', 'qa_tester', '-1'])('answers 400 for %s, neither an id nor a slug', async (ref) => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', `/agent-templates/${ref}`, as(user));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('params.idOrSlug'));
  });

  it('answers 404 for another organization’s template, by id and by slug', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const created = await createTemplate(owner, { name: 'Private', slug: 'private-one' });

    // Act
    const byId = await call(templates, 'GET', `/agent-templates/${created.id}`, as(stranger));
    const bySlug = await call(templates, 'GET', '/agent-templates/private-one', as(stranger));

    // Assess
    expect(byId.status).toBe(404);
    expect(bySlug.status).toBe(404);
  });

  it('answers 401 without a credential', async () => {
    // Act
    const response = await call(templates, 'GET', '/agent-templates/1');

    // Assess
    expect(response.status).toBe(401);
  });
});

describe('POST /agent-templates/{idOrSlug}/apply', () => {
  it('answers exactly the applied configuration, names filled in, and writes nothing', async () => {
    // Prepare
    const user = await newUser('builder');
    const template = (await call(templates, 'GET', '/agent-templates/full-stack-dev', as(user))).body.data;
    const before = await table.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': tenantPk(user.orgId) },
      ConsistentRead: true,
    });

    // Act
    const response = await call(
      templates,
      'POST',
      '/agent-templates/full-stack-dev/apply',
      as(user, { body: { name: 'dev-bot-2', display_name: 'Dev Bot' } }),
    );

    // Assess
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(Object.keys(response.body.data).sort()).toEqual(APPLIED_FIELDS);
    expect(response.body.data).toEqual({
      name: 'dev-bot-2',
      display_name: 'Dev Bot',
      model: 'gpt-4o',
      interval_sec: template.interval_sec,
      identity: template.identity.replaceAll('{{display_name}}', 'Dev Bot'),
      soul_content: template.soul_content,
      core_rules: template.core_rules,
      tools: template.tools,
      capabilities: template.capabilities,
      config: { model_tier: 'standard' },
      template_slug: 'full-stack-dev',
      template_name: 'Full-Stack Dev',
    });
    expect(response.body.data.identity).toMatch(/^You are Dev Bot, /);
    expect(response.body.data.identity).not.toContain('{{');
    const after = await table.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': tenantPk(user.orgId) },
      ConsistentRead: true,
    });
    expect(after.Items?.filter((item) => !String(item.sk).startsWith('RATE'))).toEqual(
      before.Items?.filter((item) => !String(item.sk).startsWith('RATE')),
    );
  });

  it('applies by id and applies the organization’s own templates', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, {
      name: 'Triage',
      slug: 'triage',
      model: 'gpt-4o-mini',
      interval_sec: 120,
      identity: 'You are {{ display_name }} ({{name}}), and you triage {{tickets}}.',
      tools: ['http_request'],
      capabilities: ['triage'],
      config: { queue: 'support' },
    });

    // Act
    const builtIn = await call(
      templates,
      'POST',
      '/agent-templates/4/apply',
      as(owner, { body: { name: 'crawler', display_name: 'Crawler' } }),
    );
    const own = await call(
      templates,
      'POST',
      `/agent-templates/${created.id}/apply`,
      as(owner, { body: { name: 'triager', display_name: 'Triager' } }),
    );

    // Assess
    expect(builtIn.status).toBe(200);
    expect(builtIn.body.data).toMatchObject({ template_slug: 'web-scraper', model: 'gpt-4o-mini' });
    expect(own.body.data).toEqual({
      name: 'triager',
      display_name: 'Triager',
      model: 'gpt-4o-mini',
      interval_sec: 120,
      identity: 'You are Triager (triager), and you triage {{tickets}}.',
      soul_content: '',
      core_rules: '',
      tools: ['http_request'],
      capabilities: ['triage'],
      config: { queue: 'support' },
      template_slug: 'triage',
      template_name: 'Triage',
    });
  });

  it.each([
    ['an uppercase name', { name: 'DevBot', display_name: 'Dev' }, 'body.name'],
    ['a name with a space', { name: 'dev bot', display_name: 'Dev' }, 'body.name'],
    ['a name with an underscore', { name: 'dev_bot', display_name: 'Dev' }, 'body.name'],
    ['a name starting with a digit', { name: '1dev', display_name: 'Dev' }, 'body.name'],
    ['a name of 41 characters', { name: 'a'.repeat(41), display_name: 'Dev' }, 'body.name'],
    ['no name', { display_name: 'Dev' }, 'body.name'],
    ['no display_name', { name: 'dev' }, 'body.display_name'],
    ['a blank display_name', { name: 'dev', display_name: '   ' }, 'body.display_name'],
  ])('answers 400 for %s', async (_case, body, path) => {
    // Prepare
    const user = await newUser('builder');

    // Act
    const response = await call(templates, 'POST', '/agent-templates/devops/apply', as(user, { body }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(path));
  });

  it('accepts a 40-character name', async () => {
    // Prepare
    const user = await newUser('builder');

    // Act
    const response = await call(
      templates,
      'POST',
      '/agent-templates/devops/apply',
      as(user, { body: { name: `a${'-b'.repeat(19)}9`, display_name: 'Ops' } }),
    );

    // Assess
    expect(response.status).toBe(200);
  });

  it('answers 404 for an unknown template and 409 for an archived one', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, { name: 'Gone', slug: 'gone' });
    await call(templates, 'DELETE', `/v1/public/templates/${created.id}`, as(owner));
    const body = { name: 'agent', display_name: 'Agent' };

    // Act
    const unknown = await call(templates, 'POST', '/agent-templates/nothing-here/apply', as(owner, { body }));
    const archived = await call(templates, 'POST', '/agent-templates/gone/apply', as(owner, { body }));

    // Assess
    expect(unknown.status).toBe(404);
    expect(archived.status).toBe(409);
    expect(archived.body.error.message).toMatch(/archived/);
  });

  it('is open to a viewer, who may read but not create templates', async () => {
    // Prepare
    const owner = await newUser('owner');
    const viewer = await newUser('viewer');
    await joinOrganization(viewer, owner.orgId, 'viewer');
    const inOwnersOrg = (options: CallOptions = {}) =>
      as(viewer, { ...options, headers: { 'x-organization-id': owner.orgId } });

    // Act
    const applied = await call(
      templates,
      'POST',
      '/agent-templates/qa-tester/apply',
      inOwnersOrg({ body: { name: 'qa', display_name: 'QA' } }),
    );
    const created = await call(
      templates,
      'POST',
      '/v1/public/templates',
      inOwnersOrg({ body: { name: 'Nope', slug: 'nope' } }),
    );

    // Assess
    expect(applied.status).toBe(200);
    expect(created.status).toBe(403);
  });
});

describe('POST /v1/public/templates', () => {
  it('creates a template with defaults for what is not given, readable by id', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(
      templates,
      'POST',
      '/v1/public/templates',
      as(owner, { body: { name: '  Release Notes  ', slug: 'release-notes', description: 'Writes release notes' } }),
    );
    const fetched = await call(templates, 'GET', `/v1/public/templates/${response.body.data.id}`, as(owner));

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.any(Number),
        slug: 'release-notes',
        name: 'Release Notes',
        description: 'Writes release notes',
        icon: 'bot',
        category: null,
        model: 'gpt-4o',
        interval_sec: 300,
        identity: '',
        soul_content: '',
        core_rules: '',
        tools: [],
        capabilities: [],
        config: {},
        is_featured: false,
        sort_order: 100,
        built_in: false,
        status: 'active',
        created_at: clock.now().toISOString(),
        updated_at: clock.now().toISOString(),
        archived_at: null,
      },
    });
    expect(response.body.data.id).toBeGreaterThan(1000);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(response.body);
    expect(JSON.stringify(fetched.body)).not.toMatch(/"pk"|"sk"|created_by/);
  });

  it('stores every field given and numbers the organization’s templates from 1001', async () => {
    // Prepare
    const owner = await newUser('owner');
    const body = {
      name: 'Invoice Parser',
      slug: 'invoice-parser',
      description: 'Reads invoices',
      icon: 'file-text',
      category: 'data',
      model: 'gpt-4o-mini',
      interval_sec: 86_400,
      identity: 'You parse invoices.',
      soul_content: '# Invoices\n\n## Scope\nPDFs only.',
      core_rules: '1. Never pay anything.',
      tools: ['file_read', 'data_transform'],
      capabilities: ['data_extraction'],
      config: { currency: 'EUR', nested: { depth: [1, 2] } },
      is_featured: true,
      sort_order: 5,
    };

    // Act
    const first = await createTemplate(owner, body);
    const second = await createTemplate(owner, { name: 'Second', slug: 'second' });

    // Assess
    expect(first).toMatchObject({ ...body, id: 1001, built_in: false, status: 'active' });
    expect(second.id).toBe(1002);
  });

  it('answers 409 for a built-in slug and for a slug the organization has', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTemplate(owner, { name: 'Taken', slug: 'taken' });

    // Act
    const builtIn = await call(
      templates,
      'POST',
      '/v1/public/templates',
      as(owner, { body: { name: 'X', slug: 'devops' } }),
    );
    const own = await call(
      templates,
      'POST',
      '/v1/public/templates',
      as(owner, { body: { name: 'Y', slug: 'taken' } }),
    );

    // Assess
    for (const response of [builtIn, own]) {
      expect(response.status).toBe(409);
      expect(response.body).toEqual({
        error: {
          code: 'CONFLICT',
          message: 'A template with this slug exists',
          details: [{ path: 'body.slug', message: 'is taken' }],
        },
      });
    }
  });

  it('lets another organization use the same slug', async () => {
    // Prepare
    const owner = await newUser('owner');
    const other = await newUser('other');
    await createTemplate(owner, { name: 'Shared', slug: 'shared-slug' });

    // Act
    const response = await call(
      templates,
      'POST',
      '/v1/public/templates',
      as(other, { body: { name: 'Shared', slug: 'shared-slug' } }),
    );

    // Assess
    expect(response.status).toBe(201);
  });

  it('makes one template of 8 parallel creates of one slug; the others hear 409', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        call(templates, 'POST', '/v1/public/templates', as(owner, { body: { name: `Racer ${index}`, slug: 'racer' } })),
      ),
    );
    const listed = await call(templates, 'GET', '/v1/public/templates', as(owner));

    // Assess
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    expect(slugsOf(listed).filter((slug) => slug === 'racer')).toHaveLength(1);
  });

  it.each([
    ['no slug', { name: 'No slug' }, 'body.slug'],
    ['no name', { slug: 'no-name' }, 'body.name'],
    ['an uppercase slug', { name: 'X', slug: 'Upper' }, 'body.slug'],
    ['a slug starting with a digit', { name: 'X', slug: '42-agents' }, 'body.slug'],
    ['a slug with an underscore', { name: 'X', slug: 'under_score' }, 'body.slug'],
    ['an unknown category', { name: 'X', slug: 'x1', category: 'marketing' }, 'body.category'],
    ['interval_sec 0', { name: 'X', slug: 'x2', interval_sec: 0 }, 'body.interval_sec'],
    ['interval_sec 86401', { name: 'X', slug: 'x3', interval_sec: 86_401 }, 'body.interval_sec'],
    ['a fractional interval_sec', { name: 'X', slug: 'x4', interval_sec: 1.5 }, 'body.interval_sec'],
    ['tools that are not strings', { name: 'X', slug: 'x5', tools: [1] }, 'body.tools[0]'],
    ['a tool named twice', { name: 'X', slug: 'x6', tools: ['git', 'git'] }, 'body.tools'],
    ['config that is a list', { name: 'X', slug: 'x7', config: [] }, 'body.config'],
  ])('answers 400 for %s', async (_case, body, path) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(templates, 'POST', '/v1/public/templates', as(owner, { body }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(path));
  });
});

describe('GET /v1/public/templates', () => {
  it('lists built-ins and the organization’s templates as full records, filtered and paged', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTemplate(owner, { name: 'Data One', slug: 'data-one', category: 'data', is_featured: true });

    // Act
    const all = await call(templates, 'GET', '/v1/public/templates', as(owner));
    const data = await call(templates, 'GET', '/v1/public/templates', as(owner, { query: { category: 'data' } }));
    const featuredData = await call(
      templates,
      'GET',
      '/v1/public/templates',
      as(owner, { query: { category: 'data', featured: 'true' } }),
    );
    const paged = await call(
      templates,
      'GET',
      '/v1/public/templates',
      as(owner, { query: { limit: '1', offset: '5' } }),
    );

    // Assess
    expect(all.status).toBe(200);
    expect(slugsOf(all)).toEqual([...BUILT_IN_SLUGS, 'data-one']);
    expect(Object.keys(all.body.data[0])).toEqual(expect.arrayContaining(['identity', 'soul_content', 'built_in']));
    expect(slugsOf(data)).toEqual(['web-scraper', 'data-one']);
    expect(slugsOf(featuredData)).toEqual(['data-one']);
    expect(slugsOf(paged)).toEqual(['data-one']);
    expect(paged.body.meta).toEqual({ total: 6, limit: 1, offset: 5 });
  });

  it('reads a built-in by its id', async () => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', '/v1/public/templates/5', as(user));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: 5, slug: 'devops', built_in: true });
  });

  it.each(['abc', '0', '-1', '1.5'])('answers 400 for the id %s', async (id) => {
    // Prepare
    const user = await newUser('reader');

    // Act
    const response = await call(templates, 'GET', `/v1/public/templates/${id}`, as(user));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('params.id'));
  });
});

describe('PATCH /v1/public/templates/{id}', () => {
  it('changes the fields given and nothing else', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, { name: 'Draft', slug: 'draft', category: 'quality', tools: ['git'] });
    clock.advance(60_000);

    // Act
    const response = await call(
      templates,
      'PATCH',
      `/v1/public/templates/${created.id}`,
      as(owner, { body: { name: 'Final', tools: ['git', 'shell'], category: null, interval_sec: 60 } }),
    );
    const fetched = await call(templates, 'GET', `/v1/public/templates/${created.id}`, as(owner));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id: created.id,
      slug: 'draft',
      name: 'Final',
      tools: ['git', 'shell'],
      category: null,
      interval_sec: 60,
      model: 'gpt-4o',
      created_at: created.created_at,
      updated_at: clock.now().toISOString(),
    });
    expect(fetched.body).toEqual(response.body);
  });

  it('writes nothing when no value changes', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, { name: 'Same', slug: 'same', tools: ['git'] });
    clock.advance(60_000);

    // Act
    const response = await call(
      templates,
      'PATCH',
      `/v1/public/templates/${created.id}`,
      as(owner, { body: { name: 'Same', tools: ['git'] } }),
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.updated_at).toBe(created.created_at);
  });

  it('answers 400 for a body with slug, and the slug stays', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, { name: 'Fixed', slug: 'fixed' });

    // Act
    const response = await call(
      templates,
      'PATCH',
      `/v1/public/templates/${created.id}`,
      as(owner, { body: { name: 'Renamed', slug: 'moved' } }),
    );
    const fetched = await call(templates, 'GET', `/v1/public/templates/${created.id}`, as(owner));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('body.slug'));
    expect(fetched.body.data).toMatchObject({ slug: 'fixed', name: 'Fixed' });
  });

  it('answers 400 for an empty body', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, { name: 'Empty', slug: 'empty' });

    // Act
    const response = await call(templates, 'PATCH', `/v1/public/templates/${created.id}`, as(owner, { body: {} }));

    // Assess
    expect(response.status).toBe(400);
  });

  it('answers 403 for a built-in, and the built-in stays as it was', async () => {
    // Prepare
    const user = await newUser('owner');
    const before = await call(templates, 'GET', '/v1/public/templates/1', as(user));

    // Act
    const response = await call(templates, 'PATCH', '/v1/public/templates/1', as(user, { body: { name: 'Mine now' } }));
    const after = await call(templates, 'GET', '/v1/public/templates/1', as(user));

    // Assess
    expect(response.status).toBe(403);
    expect(response.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/read-only/) });
    expect(after.body).toEqual(before.body);
  });

  it('answers 404 for an unknown id and for another organization’s template', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const created = await createTemplate(owner, { name: 'Theirs', slug: 'theirs' });

    // Act
    const unknown = await call(templates, 'PATCH', '/v1/public/templates/9999', as(owner, { body: { name: 'X' } }));
    const unknownLow = await call(templates, 'PATCH', '/v1/public/templates/6', as(owner, { body: { name: 'X' } }));
    const foreign = await call(
      templates,
      'PATCH',
      `/v1/public/templates/${created.id}`,
      as(stranger, { body: { name: 'Hijacked' } }),
    );
    const fetched = await call(templates, 'GET', `/v1/public/templates/${created.id}`, as(owner));

    // Assess
    expect([unknown.status, unknownLow.status, foreign.status]).toEqual([404, 404, 404]);
    expect(fetched.body.data.name).toBe('Theirs');
  });
});

describe('DELETE /v1/public/templates/{id}', () => {
  it('archives: hidden from both lists, readable by id and slug, slug kept', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, { name: 'Retiring', slug: 'retiring' });
    clock.advance(60_000);

    // Act
    const response = await call(templates, 'DELETE', `/v1/public/templates/${created.id}`, as(owner));
    const publicList = await call(templates, 'GET', '/v1/public/templates', as(owner));
    const list = await call(templates, 'GET', '/agent-templates', as(owner));
    const byId = await call(templates, 'GET', `/v1/public/templates/${created.id}`, as(owner));
    const bySlug = await call(templates, 'GET', '/agent-templates/retiring', as(owner));
    const again = await call(
      templates,
      'POST',
      '/v1/public/templates',
      as(owner, { body: { name: 'New', slug: 'retiring' } }),
    );
    const patch = await call(
      templates,
      'PATCH',
      `/v1/public/templates/${created.id}`,
      as(owner, { body: { name: 'Z' } }),
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: expect.objectContaining({ id: created.id, status: 'archived', archived_at: clock.now().toISOString() }),
      meta: { deleted: false, status: 'archived' },
    });
    expect(slugsOf(publicList)).not.toContain('retiring');
    expect(slugsOf(list)).not.toContain('retiring');
    expect(byId.status).toBe(200);
    expect(byId.body.data).toEqual(response.body.data);
    expect(bySlug.body.data).toEqual(response.body.data);
    expect(again.status).toBe(409);
    expect(patch.status).toBe(409);
  });

  it('answers an archived template as it is when archived again', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createTemplate(owner, { name: 'Twice', slug: 'twice' });
    const first = await call(templates, 'DELETE', `/v1/public/templates/${created.id}`, as(owner));
    clock.advance(60_000);

    // Act
    const second = await call(templates, 'DELETE', `/v1/public/templates/${created.id}`, as(owner));

    // Assess
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
  });

  it('answers 403 for a built-in and 404 for another organization’s template', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const created = await createTemplate(owner, { name: 'Kept', slug: 'kept' });

    // Act
    const builtIn = await call(templates, 'DELETE', '/v1/public/templates/2', as(stranger));
    const foreign = await call(templates, 'DELETE', `/v1/public/templates/${created.id}`, as(stranger));
    const foreignRead = await call(templates, 'GET', `/v1/public/templates/${created.id}`, as(stranger));
    const fetched = await call(templates, 'GET', `/v1/public/templates/${created.id}`, as(owner));
    const builtInAfter = await call(templates, 'GET', '/agent-templates', as(stranger));

    // Assess
    expect(builtIn.status).toBe(403);
    expect(foreign.status).toBe(404);
    expect(foreignRead.status).toBe(404);
    expect(fetched.body.data.status).toBe('active');
    expect(slugsOf(builtInAfter)).toEqual(BUILT_IN_SLUGS);
  });
});
