import { beforeAll, describe, expect, it } from 'vitest';
import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { agentTemplatesHandler } from '#functions/http/agent-templates';
import { agentsHandler } from '#functions/http/agents';
import { handler as products } from '#functions/http/products';
import { handler as search } from '#functions/http/search';
import { tasksHandler } from '#functions/http/tasks';
import { pad, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import {
  agentSearchFields,
  pipelineSearchFields,
  productSearchFields,
  templateSearchFields,
  wordsOf,
} from '#lib/search/search-fields';
import type { SearchKind } from '#lib/search/search-postings';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import { testQueue } from '#tests/support/queues';
import { recordingScheduler } from '#tests/support/scheduler';

/**
 * GET /search over records written through their own APIs, in two organizations that hold the same
 * words (the second's records also carry `zephyr`, so that a leak would show).
 */

const tasks = tasksHandler({ ports: { queue: testQueue } });
const agents = agentsHandler({ ports: { scheduler: recordingScheduler() } });
const templates = agentTemplatesHandler();
const pipelines = agentPipelinesHandler({ ports: { queue: testQueue } });

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function created(handler: Parameters<typeof call>[0], user: TestUser, path: string, body: object) {
  const response = await call(handler, 'POST', path, as(user, { body }));
  if (response.status !== 201 && response.status !== 200) {
    throw new Error(`POST ${path} failed: ${JSON.stringify(response.body)}`);
  }
  return response.body.data;
}

async function patched(handler: Parameters<typeof call>[0], user: TestUser, path: string, body: object) {
  const response = await call(handler, 'PATCH', path, as(user, { body }));
  if (response.status !== 200) throw new Error(`PATCH ${path} failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

interface Seeded {
  task: number;
  quietTask: number;
  product: { id: number; slug: string };
  agent: number;
  template: { id: number; slug: string };
  pipeline: number;
}

const LONG_DESCRIPTION =
  'This task has a long description that keeps going for a while before it says anything useful; ' +
  'only near the end does it mention the orion rocket, which is what a search for it should quote, ' +
  'with some more words after it so that the snippet is cut on both sides of the match.';

/** One record of each type holding `orion`, plus `marker` where it may go without changing the match. */
async function seed(user: TestUser, marker: string): Promise<Seeded> {
  const task = await created(tasks, user, '/tasks', {
    title: `Orion launch checklist ${marker}`.trim(),
    description: 'Prepare the rocket',
  });
  const quietTask = await created(tasks, user, '/tasks', {
    title: `Water the plants ${marker}`.trim(),
    description: LONG_DESCRIPTION,
  });
  const product = await created(products, user, '/products', {
    name: `Orion Portal ${marker}`.trim(),
    tagline: 'The customer portal',
  });
  const agent = await created(agents, user, '/v1/public/agents', { name: 'orion-bot', role: 'deploys the site' });
  const template = await created(templates, user, '/v1/public/templates', {
    name: `Orion Reviewer ${marker}`.trim(),
    slug: 'orion-reviewer',
    description: 'Reviews pull requests',
  });
  const pipeline = await created(pipelines, user, '/agent-pipelines', {
    name: `Orion release ${marker}`.trim(),
    description: 'Builds and ships',
    stages: [{ name: 'build', agent: 'qa-tester', depends_on: [], config: {} }],
  });
  return {
    task: task.id,
    quietTask: quietTask.id,
    product: { id: product.id, slug: product.slug },
    agent: agent.id,
    template: { id: template.id, slug: template.slug },
    pipeline: pipeline.id,
  };
}

let owner: TestUser;
let rival: TestUser;
let mine: Seeded;

beforeAll(async () => {
  await newUser('instanceadmin');
  owner = await newUser('owner');
  rival = await newUser('rival');
  mine = await seed(owner, '');
  await seed(rival, 'zephyr');
});

async function find(user: TestUser, query: Record<string, string>) {
  return call(search, 'GET', '/search', as(user, { query }));
}

/** The posting items of one record, as words. */
async function postingWords(orgId: string, kind: SearchKind, ref: string): Promise<string[]> {
  const result = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': `SEARCH#${kind}#` },
    ConsistentRead: true,
  });
  return (result.Items ?? [])
    .filter((item) => item.ref === ref)
    .map((item) => String(item.sk).split('#')[2] as string)
    .sort();
}

describe('GET /search', () => {
  it('finds every type of record, grouped by type, with title, matching field, snippet and link', async () => {
    // Act
    const response = await find(owner, { q: 'orion' });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        q: 'orion',
        limit: 5,
        groups: {
          tasks: {
            items: [
              {
                type: 'task',
                id: mine.task,
                title: 'Orion launch checklist',
                field: 'title',
                snippet: 'Orion launch checklist',
                link: `/tasks/${mine.task}`,
              },
              {
                type: 'task',
                id: mine.quietTask,
                title: 'Water the plants',
                field: 'description',
                snippet: expect.stringMatching(/^….*orion rocket.*…$/),
                link: `/tasks/${mine.quietTask}`,
              },
            ],
            more: false,
          },
          products: {
            items: [
              {
                type: 'product',
                id: mine.product.id,
                title: 'Orion Portal',
                field: 'name',
                snippet: 'Orion Portal',
                link: `/products/${mine.product.slug}`,
              },
            ],
            more: false,
          },
          agents: {
            items: [
              {
                type: 'agent',
                id: mine.agent,
                title: 'orion-bot',
                field: 'name',
                snippet: 'orion-bot',
                link: `/v1/public/agents/${mine.agent}`,
              },
            ],
            more: false,
          },
          templates: {
            items: [
              {
                type: 'template',
                id: mine.template.id,
                title: 'Orion Reviewer',
                field: 'name',
                snippet: 'Orion Reviewer',
                link: '/agent-templates/orion-reviewer',
              },
            ],
            more: false,
          },
          pipelines: {
            items: [
              {
                type: 'pipeline',
                id: mine.pipeline,
                title: 'Orion release',
                field: 'name',
                snippet: 'Orion release',
                link: `/agent-pipelines/${mine.pipeline}`,
              },
            ],
            more: false,
          },
        },
      },
    });
    const snippet = response.body.data.groups.tasks.items[1].snippet as string;
    expect(snippet.length).toBeLessThanOrEqual(162);
  });

  it('never answers another organization’s records, though they hold the same words', async () => {
    // Act
    const leak = await find(owner, { q: 'zephyr' });
    const shared = await find(owner, { q: 'orion' });
    const theirs = await find(rival, { q: 'orion zephyr' });

    // Assess
    for (const group of Object.values(leak.body.data.groups) as Array<{ items: unknown[] }>) {
      expect(group.items).toEqual([]);
    }
    expect(JSON.stringify(shared.body)).not.toContain('zephyr');
    const titles = (Object.values(theirs.body.data.groups) as Array<{ items: Array<{ title: string }> }>).flatMap(
      (group) => group.items.map((item) => item.title),
    );
    expect(titles.sort()).toEqual([
      'Orion Portal zephyr',
      'Orion Reviewer zephyr',
      'Orion launch checklist zephyr',
      'Orion release zephyr',
      'Water the plants zephyr',
    ]);
  });

  it('matches word prefixes, every word, any case and accent, in any searchable field', async () => {
    // Act
    const prefix = await find(owner, { q: 'ORI LAUNCH', types: 'tasks' });
    const everyWord = await find(owner, { q: 'orion plants', types: 'tasks' });
    const role = await find(owner, { q: 'déploys', types: 'agents' });
    const tagline = await find(owner, { q: 'customer', types: 'products' });

    // Assess
    expect(prefix.body.data.groups.tasks.items.map((item: { id: number }) => item.id)).toEqual([mine.task]);
    expect(everyWord.body.data.groups.tasks.items.map((item: { id: number }) => item.id)).toEqual([mine.quietTask]);
    expect(role.body.data.groups.agents.items).toEqual([
      expect.objectContaining({ id: mine.agent, field: 'role', snippet: 'deploys the site' }),
    ]);
    expect(tagline.body.data.groups.products.items).toEqual([
      expect.objectContaining({ id: mine.product.id, field: 'tagline', snippet: 'The customer portal' }),
    ]);
  });

  it('finds built-in templates too', async () => {
    // Act
    const response = await find(owner, { q: 'scraper', types: 'templates' });

    // Assess
    expect(response.body.data.groups).toEqual({
      templates: {
        items: [
          {
            type: 'template',
            id: 4,
            title: 'Web Scraper',
            field: 'name',
            snippet: 'Web Scraper',
            link: '/agent-templates/web-scraper',
          },
        ],
        more: false,
      },
    });
  });

  it('answers only the types asked for', async () => {
    const response = await find(owner, { q: 'orion', types: 'products,pipelines' });
    expect(Object.keys(response.body.data.groups)).toEqual(['products', 'pipelines']);
  });

  it('shows at most limit per group (default 5, at most 20), newest first, and says when there are more', async () => {
    // Prepare
    const user = await newUser('many');
    const ids: number[] = [];
    for (let n = 1; n <= 7; n += 1) {
      ids.push((await created(products, user, '/products', { name: `Nebula ${n}` })).id);
      await created(tasks, user, '/tasks', { title: `Nebula task ${n}` });
    }

    // Act
    const byDefault = await find(user, { q: 'nebula' });
    const three = await find(user, { q: 'nebula', limit: '3' });
    const clamped = await find(user, { q: 'nebula', limit: '500' });

    // Assess
    expect(byDefault.body.data.groups.products.items.map((item: { id: number }) => item.id)).toEqual(
      ids.slice(2).reverse(),
    );
    expect(byDefault.body.data.groups.products.more).toBe(true);
    expect(byDefault.body.data.groups.tasks.items).toHaveLength(5);
    expect(three.body.data.groups.products.items).toHaveLength(3);
    expect(three.body.data.groups.tasks.items).toHaveLength(3);
    expect(clamped.body.data.limit).toBe(20);
    expect(clamped.body.data.groups.products).toEqual({ items: expect.any(Array), more: false });
    expect(clamped.body.data.groups.products.items).toHaveLength(7);
    expect(clamped.body.data.groups.tasks.items).toHaveLength(7);
  });

  it.each([
    ['no q', {}],
    ['an empty q', { q: '' }],
    ['a q of spaces', { q: '    ' }],
    ['a q of 201 characters', { q: 'a'.repeat(201) }],
    ['a q without words', { q: '?!…' }],
  ])('answers 400 for %s', async (_name, query) => {
    // Act
    const response = await find(owner, query as Record<string, string>);

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'query.q', message: expect.any(String) }],
    });
  });

  it('takes a q of 200 characters, counted after trimming', async () => {
    const response = await find(owner, { q: `  ${'a'.repeat(200)}  ` });
    expect(response.status).toBe(200);
  });

  it.each([
    ['an unknown type', { q: 'orion', types: 'files' }, 'query.types'],
    ['limit=0', { q: 'orion', limit: '0' }, 'query.limit'],
  ])('answers 400 for %s', async (_name, query, path) => {
    const response = await find(owner, query);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ path, message: expect.any(String) }]);
  });

  it('answers 401 without a credential', async () => {
    const response = await call(search, 'GET', '/search', { query: { q: 'orion' } });
    expect(response.status).toBe(401);
  });
});

describe('search postings follow the records', () => {
  it('moves a product’s postings when it is renamed', async () => {
    // Prepare
    const user = await newUser('renames');
    const product = await created(products, user, '/products', {
      name: 'Lyra Console',
      slug: 'console-one',
      tagline: 'Operator tools',
    });

    // Act
    await patched(products, user, `/products/${product.slug}`, {
      name: 'Vega Console',
      description: 'For night shifts',
    });

    // Assess
    expect((await find(user, { q: 'lyra' })).body.data.groups.products.items).toEqual([]);
    expect((await find(user, { q: 'vega night' })).body.data.groups.products.items).toEqual([
      expect.objectContaining({ id: product.id, title: 'Vega Console' }),
    ]);
    expect(await postingWords(user.orgId, 'product', product.slug)).toEqual(
      wordsOf(productSearchFields({ ...product, name: 'Vega Console', description: 'For night shifts' })).sort(),
    );
  });

  it('keeps a product’s postings exact when renames race', async () => {
    // Prepare
    const user = await newUser('races');
    const product = await created(products, user, '/products', { name: 'Start name' });
    const names = ['Alpha one', 'Bravo two', 'Charlie three', 'Delta four', 'Echo five'];

    // Act
    await Promise.all(
      names.map((name) => call(products, 'PATCH', `/products/${product.slug}`, as(user, { body: { name } }))),
    );

    // Assess
    const final = await call(products, 'GET', `/products/${product.slug}`, as(user));
    expect(await postingWords(user.orgId, 'product', product.slug)).toEqual(
      wordsOf(productSearchFields(final.body.data)).sort(),
    );
  });

  it('keeps a template’s postings exact when renames race', async () => {
    // Prepare
    const user = await newUser('templateraces');
    const template = await created(templates, user, '/v1/public/templates', { name: 'Start name', slug: 'racer' });
    const names = ['Alpha one', 'Bravo two', 'Charlie three', 'Delta four', 'Echo five'];

    // Act
    await Promise.all(
      names.map((name) =>
        call(templates, 'PATCH', `/v1/public/templates/${template.id}`, as(user, { body: { name } })),
      ),
    );

    // Assess
    const final = await call(templates, 'GET', `/v1/public/templates/${template.id}`, as(user));
    expect(await postingWords(user.orgId, 'template', pad(template.id))).toEqual(
      wordsOf(templateSearchFields(final.body.data)).sort(),
    );
  });

  it('moves an agent’s postings when its role changes', async () => {
    // Prepare
    const user = await newUser('roles');
    const agent = await created(agents, user, '/v1/public/agents', { name: 'watcher', role: 'guards the gate' });

    // Act
    await patched(agents, user, `/v1/public/agents/${agent.id}`, { role: 'counts the stars' });

    // Assess
    expect((await find(user, { q: 'gate' })).body.data.groups.agents.items).toEqual([]);
    expect((await find(user, { q: 'stars' })).body.data.groups.agents.items).toEqual([
      expect.objectContaining({ id: agent.id, field: 'role', snippet: 'counts the stars' }),
    ]);
    expect(await postingWords(user.orgId, 'agent', pad(agent.id))).toEqual(
      wordsOf(agentSearchFields({ name: 'watcher', display_name: null, role: 'counts the stars' })).sort(),
    );
  });

  it('moves a template’s postings on rename and removes them when it is archived', async () => {
    // Prepare
    const user = await newUser('templates');
    const template = await created(templates, user, '/v1/public/templates', {
      name: 'Carina Auditor',
      slug: 'carina-auditor',
      description: 'Audits ledgers',
    });

    // Act
    await patched(templates, user, `/v1/public/templates/${template.id}`, { name: 'Draco Auditor' });
    const renamedOld = await find(user, { q: 'carina', types: 'templates' });
    const renamedNew = await find(user, { q: 'draco', types: 'templates' });
    const archived = await call(templates, 'DELETE', `/v1/public/templates/${template.id}`, as(user));
    const afterArchive = await find(user, { q: 'draco', types: 'templates' });

    // Assess
    // The slug keeps its words: `carina` still finds it by its slug.
    expect(renamedOld.body.data.groups.templates.items).toEqual([
      expect.objectContaining({ id: template.id, title: 'Draco Auditor', field: 'slug' }),
    ]);
    expect(renamedNew.body.data.groups.templates.items).toEqual([
      expect.objectContaining({ id: template.id, field: 'name' }),
    ]);
    expect(archived.status).toBe(200);
    expect(afterArchive.body.data.groups.templates.items).toEqual([]);
    expect(await postingWords(user.orgId, 'template', pad(template.id))).toEqual([]);
  });

  it('moves a pipeline’s postings on rename and removes them when it is deleted', async () => {
    // Prepare
    const user = await newUser('pipelines');
    const pipeline = await created(pipelines, user, '/agent-pipelines', {
      name: 'Polaris nightly',
      stages: [{ name: 'build', agent: 'qa-tester', depends_on: [], config: {} }],
    });

    // Act
    await patched(pipelines, user, `/agent-pipelines/${pipeline.id}`, { name: 'Sirius nightly' });
    const renamed = await find(user, { q: 'polaris', types: 'pipelines' });
    const found = await find(user, { q: 'sirius', types: 'pipelines' });
    const postingsAfterRename = await postingWords(user.orgId, 'pipeline', pad(pipeline.id));
    const deleted = await call(pipelines, 'DELETE', `/agent-pipelines/${pipeline.id}`, as(user));
    const afterDelete = await find(user, { q: 'nightly', types: 'pipelines' });

    // Assess
    expect(renamed.body.data.groups.pipelines.items).toEqual([]);
    expect(found.body.data.groups.pipelines.items).toEqual([expect.objectContaining({ id: pipeline.id })]);
    expect(postingsAfterRename).toEqual(
      wordsOf(pipelineSearchFields({ name: 'Sirius nightly', description: '' })).sort(),
    );
    expect(deleted.status).toBe(200);
    expect(afterDelete.body.data.groups.pipelines.items).toEqual([]);
    expect(await postingWords(user.orgId, 'pipeline', pad(pipeline.id))).toEqual([]);
  });

  it('indexes at most 32 words, so that a change replacing all of them fits one transaction', async () => {
    // Prepare
    const user = await newUser('manywords');
    const text = (stem: string) => Array.from({ length: 40 }, (_, n) => `${stem}${n}`).join(' ');
    const pipeline = await created(pipelines, user, '/agent-pipelines', {
      name: 'first',
      description: text('old'),
      stages: [{ name: 'build', agent: 'qa-tester', depends_on: [], config: {} }],
    });
    const product = await created(products, user, '/products', {
      name: 'first',
      slug: 'wordy',
      description: text('old'),
    });

    // Act
    const renamedPipeline = await call(
      pipelines,
      'PATCH',
      `/agent-pipelines/${pipeline.id}`,
      as(user, { body: { name: 'second', description: text('new') } }),
    );
    const renamedProduct = await call(
      products,
      'PATCH',
      '/products/wordy',
      as(user, { body: { name: 'second', description: text('new'), brand_color: '#123456' } }),
    );

    // Assess
    expect(renamedPipeline.status).toBe(200);
    expect(renamedProduct.status).toBe(200);
    const pipelineWords = await postingWords(user.orgId, 'pipeline', pad(pipeline.id));
    expect(pipelineWords).toEqual(wordsOf(pipelineSearchFields({ name: 'second', description: text('new') })).sort());
    expect(pipelineWords).toHaveLength(32);
    expect(await postingWords(user.orgId, 'product', 'wordy')).toHaveLength(32);
    expect((await find(user, { q: 'new5', types: 'pipelines,products' })).body.data.groups).toEqual({
      pipelines: { items: [expect.objectContaining({ id: pipeline.id })], more: false },
      products: { items: [expect.objectContaining({ id: product.id })], more: false },
    });
  });

  it('finds a renamed task by its new title only', async () => {
    // Prepare
    const user = await newUser('taskrename');
    const task = await created(tasks, user, '/tasks', { title: 'Andromeda survey' });

    // Act
    await patched(tasks, user, `/tasks/${task.id}`, { title: 'Cassiopeia survey' });

    // Assess
    expect((await find(user, { q: 'andromeda', types: 'tasks' })).body.data.groups.tasks.items).toEqual([]);
    expect((await find(user, { q: 'cassiopeia', types: 'tasks' })).body.data.groups.tasks.items).toEqual([
      expect.objectContaining({ id: task.id }),
    ]);
  });
});
