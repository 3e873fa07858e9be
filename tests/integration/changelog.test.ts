import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as apiKeys } from '#functions/http/api-keys';
import { handler as changelog } from '#functions/http/changelog';
import { handler as products } from '#functions/http/products';
import type { GroupHandler } from '#lib/http/group-handler';
import { fixedClock } from '#lib/kernel/clock';
import type { Principal } from '#lib/kernel/context';
import { createTask } from '#lib/tasks/task-create';
import { contextWith } from '#tests/support/context';
import { context, httpEvent } from '#tests/support/events';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { testQueue } from '#tests/support/queues';

/**
 * GET /changelog, /changelog/summary and /changelog/feed over entries written the way the service
 * writes them: tasks created done (their completion writes the entry), by the domain's createTask on a
 * clock set to each task's time, today and on earlier days.
 */

/** The base URL the sample HTTP event was sent to. */
const API = 'https://api.example.com/api';
const DAY = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
/** The UTC date `days` before today. */
const dateBefore = (days: number) => new Date(Date.parse(today) - days * DAY).toISOString().slice(0, 10);
/** A time on the day `days` before today. */
const at = (days: number, time: string) => `${dateBefore(days)}T${time}:00.000Z`;

let owner: TestUser;
let other: TestUser;

interface Seeded {
  title: string;
  product?: string;
  assignee?: string;
  at: string;
}

const actingAs = (user: TestUser): Principal => ({
  method: 'jwt',
  orgId: user.orgId,
  capability: 'admin',
  userId: user.id,
  username: user.username,
  isInstanceAdmin: false,
  scopes: [],
  organization: { id: user.orgId, name: user.username, slug: user.username },
});

/** Creates a done task at its time (its completion writes the changelog entry) and answers its id. */
async function doneTask(user: TestUser, task: Seeded): Promise<number> {
  const ctx = contextWith({ queue: testQueue, clock: fixedClock(new Date(task.at)) }, actingAs(user));
  const created = await createTask(ctx, {
    title: task.title,
    status: 'done',
    ...(task.product ? { product: { slug: task.product } } : {}),
    ...(task.assignee ? { assignee: task.assignee } : {}),
  });
  return created.id;
}

async function createProduct(user: TestUser, name: string): Promise<void> {
  const response = await call(products, 'POST', '/products', { token: user.token, body: { name } });
  if (response.status !== 201) throw new Error(`create product failed: ${JSON.stringify(response.body)}`);
}

/** The owner's entries, oldest first: two days in the default window, one long before it. */
const seeded: Seeded[] = [
  { title: 'Draft the launch plan', at: at(14, '09:00') },
  { title: 'Fix the login form', product: 'acme', assignee: 'reviewer', at: at(1, '10:00') },
  { title: 'Ship the pricing page', product: 'acme', assignee: 'builder', at: at(0, '00:00') },
  { title: 'Tidy the backlog', assignee: 'Builder', at: at(0, '00:01') },
  { title: 'Write the release notes', product: 'acme', assignee: 'reviewer', at: at(0, '00:02') },
  { title: 'Add dark mode', product: 'acme', assignee: 'builder', at: at(0, '00:03') },
];
const ids: number[] = [];

beforeAll(async () => {
  await newUser('instanceadmin');
  owner = await newUser('owner');
  other = await newUser('other');
  await createProduct(owner, 'Acme');
  await createProduct(other, 'Acme');
  for (const task of seeded) ids.push(await doneTask(owner, task));
  // The other organization has the same product and agents, and work of its own.
  await doneTask(other, { title: 'Secret roadmap', product: 'acme', assignee: 'builder', at: at(0, '00:04') });
});

const completed = (index: number) => `Completed task #${ids[index]}: ${seeded[index]?.title}`;

describe('GET /changelog', () => {
  it('keeps one agent’s entries, ignoring case, newest first', async () => {
    // Act
    const response = await call(changelog, 'GET', '/changelog', { token: owner.token, query: { agent: 'BUILDER' } });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.map((entry: { title: string }) => entry.title)).toEqual([
      completed(5),
      completed(3),
      completed(2),
    ]);
    expect(response.body.meta).toEqual({ total: 3, limit: 50, offset: 0 });
  });

  it('keeps one task’s entries, and pages', async () => {
    // Act
    const byTask = await call(changelog, 'GET', '/changelog', {
      token: owner.token,
      query: { task_id: String(ids[1]) },
    });
    const page = await call(changelog, 'GET', '/changelog', { token: owner.token, query: { limit: '2', offset: '1' } });

    // Assess
    expect(byTask.body.data).toEqual([
      {
        id: `${seeded[1]?.at}#${String(ids[1]).padStart(12, '0')}`,
        title: completed(1),
        area: 'acme',
        agent: 'reviewer',
        task_id: ids[1],
        product: 'acme',
        created_at: seeded[1]?.at,
      },
    ]);
    expect(page.body.data.map((entry: { title: string }) => entry.title)).toEqual([completed(4), completed(3)]);
    expect(page.body.meta).toEqual({ total: 6, limit: 2, offset: 1 });
  });
});

describe('GET /changelog/summary', () => {
  it('groups the last 7 days by date and area, counting every entry and showing the newest', async () => {
    // Act
    const response = await call(changelog, 'GET', '/changelog/summary', {
      token: owner.token,
      query: { limit: '2' },
    });

    // Assess
    expect(response.status).toBe(200);
    const entry = (index: number) => ({
      id: expect.stringContaining(`#${String(ids[index]).padStart(12, '0')}`),
      title: completed(index),
      agent: seeded[index]?.assignee ?? null,
      task_id: ids[index],
      created_at: seeded[index]?.at,
    });
    expect(response.body).toEqual({
      data: {
        from: dateBefore(6),
        to: today,
        days: 7,
        total: 5,
        dates: [
          {
            date: today,
            total: 4,
            areas: [
              { area: 'acme', count: 3, agents: ['builder', 'reviewer'], entries: [entry(5), entry(4)] },
              { area: 'tasks', count: 1, agents: ['Builder'], entries: [entry(3)] },
            ],
          },
          {
            date: dateBefore(1),
            total: 1,
            areas: [{ area: 'acme', count: 1, agents: ['reviewer'], entries: [entry(1)] }],
          },
        ],
      },
    });
  });

  it('reaches further back with days, and clamps days to 90', async () => {
    // Act
    const month = await call(changelog, 'GET', '/changelog/summary', { token: owner.token, query: { days: '15' } });
    const oneDay = await call(changelog, 'GET', '/changelog/summary', { token: owner.token, query: { days: '1' } });
    const clamped = await call(changelog, 'GET', '/changelog/summary', {
      token: owner.token,
      query: { days: '5000' },
    });

    // Assess
    expect(month.body.data).toMatchObject({ from: dateBefore(14), total: 6 });
    expect(month.body.data.dates.map((day: { date: string }) => day.date)).toEqual([
      today,
      dateBefore(1),
      dateBefore(14),
    ]);
    expect(oneDay.body.data).toMatchObject({ from: today, to: today, days: 1, total: 4 });
    expect(clamped.body.data).toMatchObject({ days: 90, from: dateBefore(89), total: 6 });
  });

  it('shows only the caller’s organization', async () => {
    // Act
    const response = await call(changelog, 'GET', '/changelog/summary', { token: other.token });

    // Assess
    expect(response.body.data).toMatchObject({ total: 1 });
    expect(response.body.data.dates[0].areas[0].entries[0].title).toMatch(/Secret roadmap$/);
  });

  it.each([
    ['days=0', { days: '0' }, 'query.days'],
    ['days=-1', { days: '-1' }, 'query.days'],
    ['days=abc', { days: 'abc' }, 'query.days'],
    ['limit=0', { limit: '0' }, 'query.limit'],
  ])('answers 400 for %s', async (_name, query, path) => {
    // Act
    const response = await call(changelog, 'GET', '/changelog/summary', { token: owner.token, query });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path }] });
  });

  it('answers 401 without a credential', async () => {
    const response = await call(changelog, 'GET', '/changelog/summary');
    expect(response.status).toBe(401);
  });
});

/** A GET whose body is not JSON: the response as it is. */
async function getRaw(
  handler: GroupHandler,
  path: string,
  options: { token?: string; query?: Record<string, string> },
) {
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const event = httpEvent('GET', `/api${path}`, { headers, ...(options.query ? { query: options.query } : {}) });
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  return {
    status: response.statusCode ?? 200,
    headers: (response.headers ?? {}) as Record<string, string>,
    body: response.body ?? '',
  };
}

interface RssItem {
  title: string;
  link: string;
  guid: { '#text': string; '@_isPermaLink': string };
  pubDate: string;
  description: string;
  category: string;
}

interface Rss {
  rss: {
    '@_version': string;
    channel: {
      title: string;
      link: string;
      description: string;
      lastBuildDate: string;
      'atom:link': { '@_href': string; '@_rel': string; '@_type': string };
      item?: RssItem[];
    };
  };
}

/** Reads the feed as a feed reader would: it must be well-formed XML first. */
function parseFeed(xml: string): Rss {
  expect(XMLValidator.validate(xml)).toBe(true);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseTagValue: false,
    isArray: (name) => name === 'item',
  });
  return parser.parse(xml) as Rss;
}

async function feed(query: Record<string, string> = {}, token = owner.token) {
  const response = await getRaw(changelog, '/changelog/feed', { token, query });
  expect(response.status).toBe(200);
  return { response, rss: parseFeed(response.body) };
}

const titlesOf = (rss: Rss) => (rss.rss.channel.item ?? []).map((item) => item.title);

describe('GET /changelog/feed', () => {
  it('is an RSS 2.0 document with the required channel and item elements, newest first', async () => {
    // Act
    const { response, rss } = await feed();

    // Assess
    expect(response.headers['Content-Type']).toBe('application/rss+xml; charset=utf-8');
    expect(response.body.startsWith('<?xml version="1.0" encoding="utf-8"?>')).toBe(true);
    expect(rss.rss['@_version']).toBe('2.0');
    const channel = rss.rss.channel;
    expect(channel.title).toMatch(/changelog$/);
    expect(channel.link).toBe(`${API}/changelog`);
    expect(channel.description).not.toBe('');
    expect(new Date(channel.lastBuildDate).toISOString()).toBe(seeded[5]?.at);
    expect(channel['atom:link']).toEqual({
      '@_href': `${API}/changelog/feed`,
      '@_rel': 'self',
      '@_type': 'application/rss+xml',
    });
    expect(titlesOf(rss)).toEqual([5, 4, 3, 2, 1, 0].map(completed));
    const [newest] = channel.item ?? [];
    expect(newest).toEqual({
      title: completed(5),
      link: `${API}/tasks/${ids[5]}`,
      guid: {
        '#text': `changelog:${owner.orgId}:${seeded[5]?.at}#${String(ids[5]).padStart(12, '0')}`,
        '@_isPermaLink': 'false',
      },
      pubDate: new Date(seeded[5]?.at as string).toUTCString(),
      description: `Product acme, by builder, task #${ids[5]}`,
      category: 'acme',
    });
    for (const item of channel.item ?? []) {
      expect(item.title).not.toBe('');
      expect(item.link.startsWith(`${API}/tasks/`)).toBe(true);
      expect(item.guid['#text']).not.toBe('');
      expect(Number.isNaN(Date.parse(item.pubDate))).toBe(false);
    }
  });

  it('keeps the newest limit entries', async () => {
    const { rss } = await feed({ limit: '2' });
    expect(titlesOf(rss)).toEqual([completed(5), completed(4)]);
  });

  it('keeps one agent’s entries (ignoring case), one product’s, or both', async () => {
    // Act
    const byAgent = await feed({ agent: 'builder' });
    const byProduct = await feed({ product: 'acme' });
    const both = await feed({ agent: 'Reviewer', product: 'acme', limit: '1' });

    // Assess
    expect(titlesOf(byAgent.rss)).toEqual([completed(5), completed(3), completed(2)]);
    expect(byAgent.rss.rss.channel.title).toMatch(/\(agent builder\)$/);
    expect(titlesOf(byProduct.rss)).toEqual([completed(5), completed(4), completed(2), completed(1)]);
    expect(titlesOf(both.rss)).toEqual([completed(4)]);
    expect(both.rss.rss.channel['atom:link']['@_href']).toBe(`${API}/changelog/feed?agent=Reviewer&product=acme`);
  });

  it('shows only the caller’s organization, though the other has the same product and agent', async () => {
    // Act
    const mine = await feed({ product: 'acme', agent: 'builder' });
    const theirs = await feed({}, other.token);

    // Assess
    expect(titlesOf(mine.rss).some((title) => title.includes('Secret'))).toBe(false);
    expect(titlesOf(theirs.rss)).toEqual([expect.stringMatching(/: Secret roadmap$/)]);
  });

  it('is an empty channel for an agent with no entries', async () => {
    const { rss } = await feed({ agent: 'nobody' });
    expect(rss.rss.channel.item).toBeUndefined();
    expect(rss.rss.channel.title).toMatch(/\(agent nobody\)$/);
  });

  it('keeps a title that XML would choke on readable', async () => {
    // Prepare
    const user = await newUser('xmltitles');
    const title = 'Fix <b> & "quotes" ]]> twice ]]> with a bell \u0007 here';
    const id = await doneTask(user, { title, at: at(0, '00:05') });

    // Act
    const { rss } = await feed({}, user.token);

    // Assess
    expect(titlesOf(rss)).toEqual([
      `Completed task #${id}: Fix <b> & "quotes" ]]\u200B> twice ]]\u200B> with a bell  here`,
    ]);
  });

  it('takes an organization API key, as feed readers send it', async () => {
    // Prepare
    const created = await call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
      token: owner.token,
      body: { name: 'feed reader', scopes: ['read'] },
    });

    // Act
    const { rss } = await feed({ limit: '1' }, created.body.data.key);

    // Assess
    expect(titlesOf(rss)).toEqual([completed(5)]);
  });

  it('answers errors in the JSON envelope: 401 without a credential, 400 for a bad limit', async () => {
    // Act
    const anonymous = await getRaw(changelog, '/changelog/feed', {});
    const badLimit = await getRaw(changelog, '/changelog/feed', { token: owner.token, query: { limit: 'x' } });

    // Assess
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body).error.code).toBe('UNAUTHORIZED');
    expect(badLimit.status).toBe(400);
    expect(JSON.parse(badLimit.body).error.details).toEqual([{ path: 'query.limit', message: expect.any(String) }]);
  });
});
