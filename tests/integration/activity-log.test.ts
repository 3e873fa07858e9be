import { beforeAll, describe, expect, it } from 'vitest';
import { handler as activityLog, activityLogHandler } from '#functions/http/activity-log';
import { handler as credentials } from '#functions/http/credentials';
import { handler as tasks } from '#functions/http/tasks';
import { fixedClock } from '#lib/kernel/clock';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';

/**
 * The activity log (`/activity-log`) against DynamoDB Local: entries the service writes with its
 * changes and entries clients post, the filters and their totals, the retention window, the stats of
 * the last 24 hours and 7 days, isolation between organizations and the 400s of bad input.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; every other user is an ordinary one.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Posted {
  actor_type: string;
  actor_id: string;
  action: string;
  entity_type?: string;
  entity_id?: string;
  metadata?: Record<string, unknown>;
}

/** Posts an entry as `user`, at `at` when given (through the clock port), else now. */
async function post(user: TestUser, body: Posted, at?: Date) {
  const api = at ? activityLogHandler({ ports: { clock: fixedClock(at) } }) : activityLog;
  const response = await call(api, 'POST', '/activity-log', as(user, { body }));
  if (response.status !== 201) throw new Error(`post failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: string; created_at: string } & Posted;
}

const list = (user: TestUser, query: Record<string, string> = {}) =>
  call(activityLog, 'GET', '/activity-log', as(user, { query }));

/** The entries of a list, as `action actor_id`, newest first. */
const lines = (body: { data: Posted[] }) => body.data.map((entry) => `${entry.action} ${entry.actor_id}`);

/**
 * An organization with its user's login and five posted entries after it, oldest first, each a
 * millisecond apart (through the clock port), so that newest first is one order.
 */
async function seeded(): Promise<TestUser> {
  const user = await newUser('seeded');
  const after = Date.now();
  const entries: Posted[] = [
    { actor_type: 'agent', actor_id: 'agent:scout', action: 'report.written' },
    { actor_type: 'agent', actor_id: 'agent:scout', action: 'deploy.started' },
    { actor_type: 'agent', actor_id: 'agent:builder', action: 'deploy.started' },
    { actor_type: 'system', actor_id: 'system', action: 'deploy.started' },
    { actor_type: 'api_key', actor_id: 'api_key:ci', action: 'deploy.finished' },
  ];
  for (const [index, entry] of entries.entries()) await post(user, entry, new Date(after + index));
  return user;
}

describe('POST /activity-log', () => {
  it('records an entry with who sent it, and answers 201 with it', async () => {
    // Prepare
    const user = await newUser('poster');

    // Act
    const response = await call(
      activityLog,
      'POST',
      '/activity-log',
      as(user, {
        body: {
          actor_type: 'agent',
          actor_id: 'agent:scout',
          action: 'report.written',
          entity_type: 'report',
          entity_id: 'r-1',
          metadata: { pages: 3, nested: { ok: true } },
        },
      }),
    );
    const listed = await list(user, { action: 'report.written' });

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(/^act_/),
        actor_type: 'agent',
        actor_id: 'agent:scout',
        action: 'report.written',
        entity_type: 'report',
        entity_id: 'r-1',
        metadata: { pages: 3, nested: { ok: true } },
        recorded_by: `user:${user.id}`,
        created_at: expect.any(String),
      },
    });
    expect(listed.body.data).toEqual([response.body.data]);
  });

  it('stores the values of secret-looking keys and email addresses as [REDACTED]', async () => {
    // Prepare
    const user = await newUser('redact');
    const metadata = { api_key: 'sk-live-123', nested: { password: 'hunter2', note: 'mail ada@example.com' }, n: 1 };

    // Act
    const entry = await post(user, { actor_type: 'user', actor_id: 'user:x', action: 'thing.done', metadata });
    const listed = await list(user, { action: 'thing.done' });

    // Assess
    const redacted = { api_key: '[REDACTED]', nested: { password: '[REDACTED]', note: 'mail [REDACTED]' }, n: 1 };
    expect(entry.metadata).toEqual(redacted);
    expect(listed.body.data[0].metadata).toEqual(redacted);
    expect(JSON.stringify(listed.body)).not.toMatch(/sk-live-123|hunter2|ada@example/);
  });

  it.each([
    ['a missing actor_type', { actor_id: 'a', action: 'x' }, 'body.actor_type'],
    ['an unknown actor_type', { actor_type: 'robot', actor_id: 'a', action: 'x' }, 'body.actor_type'],
    ['a missing actor_id', { actor_type: 'user', action: 'x' }, 'body.actor_id'],
    ['an actor_id with #', { actor_type: 'user', actor_id: 'a#b', action: 'x' }, 'body.actor_id'],
    ['a missing action', { actor_type: 'user', actor_id: 'a' }, 'body.action'],
    ['an action with a space', { actor_type: 'user', actor_id: 'a', action: 'x y' }, 'body.action'],
    ['an action of 101 characters', { actor_type: 'user', actor_id: 'a', action: 'x'.repeat(101) }, 'body.action'],
    ['metadata that is a list', { actor_type: 'user', actor_id: 'a', action: 'x', metadata: [1] }, 'body.metadata'],
    [
      'metadata over 8 KiB',
      { actor_type: 'user', actor_id: 'a', action: 'x', metadata: { text: 'x'.repeat(9000) } },
      'body.metadata',
    ],
    [
      'an entity_id of 201 characters',
      { actor_type: 'user', actor_id: 'a', action: 'x', entity_id: 'e'.repeat(201) },
      'body.entity_id',
    ],
  ])('answers 400 for %s, naming the field, and records nothing', async (_case, body, path) => {
    // Prepare
    const user = await newUser('invalid');

    // Act
    const response = await call(activityLog, 'POST', '/activity-log', as(user, { body }));
    const listed = await list(user, { actor_id: 'a' });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [expect.objectContaining({ path })],
    });
    expect(listed.body.meta.total).toBe(0);
  });

  it('answers 401 without a credential', async () => {
    const response = await call(activityLog, 'POST', '/activity-log', {
      body: { actor_type: 'user', actor_id: 'a', action: 'x' },
    });
    expect(response.status).toBe(401);
  });
});

describe('GET /activity-log', () => {
  it('lists the organization’s entries newest first, paged, with the exact total', async () => {
    // Prepare
    const user = await seeded();

    // Act
    const all = await list(user);
    const page = await list(user, { limit: '2', offset: '1' });
    const past = await list(user, { offset: '50' });

    // Assess
    expect(all.status).toBe(200);
    expect(lines(all.body)).toEqual([
      'deploy.finished api_key:ci',
      'deploy.started system',
      'deploy.started agent:builder',
      'deploy.started agent:scout',
      'report.written agent:scout',
      `user.login user:${user.id}`,
    ]);
    expect(all.body.meta).toEqual({ total: 6, limit: 50, offset: 0 });
    expect(lines(page.body)).toEqual(['deploy.started system', 'deploy.started agent:builder']);
    expect(page.body.meta).toEqual({ total: 6, limit: 2, offset: 1 });
    expect(past.body).toEqual({ data: [], meta: { total: 6, limit: 50, offset: 50 } });
  });

  it.each([
    [
      { actor_type: 'agent' },
      ['deploy.started agent:builder', 'deploy.started agent:scout', 'report.written agent:scout'],
    ],
    [{ actor_type: 'api_key' }, ['deploy.finished api_key:ci']],
    [{ actor_type: 'user' }, ['user.login USER']],
    [{ actor_id: 'agent:scout' }, ['deploy.started agent:scout', 'report.written agent:scout']],
    [
      { action: 'deploy.started' },
      ['deploy.started system', 'deploy.started agent:builder', 'deploy.started agent:scout'],
    ],
    [{ action: 'deploy.started', actor_type: 'agent' }, ['deploy.started agent:builder', 'deploy.started agent:scout']],
    [{ actor_id: 'agent:scout', actor_type: 'agent' }, ['deploy.started agent:scout', 'report.written agent:scout']],
    [{ actor_id: 'agent:scout', actor_type: 'system' }, []],
    [{ actor_id: 'agent:scout', action: 'deploy.started' }, ['deploy.started agent:scout']],
    [{ actor_id: 'agent:scout', action: 'deploy.started', actor_type: 'user' }, []],
    [{ action: 'never.happened' }, []],
  ])('filters by %o, with the total of the filter', async (query, expected) => {
    // Prepare
    const user = await seeded();
    const wanted = expected.map((line) => line.replace('USER', `user:${user.id}`));

    // Act
    const response = await list(user, query as Record<string, string>);
    const firstOnly = await list(user, { ...(query as Record<string, string>), limit: '1' });

    // Assess
    expect(response.status).toBe(200);
    expect(lines(response.body)).toEqual(wanted);
    expect(response.body.meta.total).toBe(wanted.length);
    expect(lines(firstOnly.body)).toEqual(wanted.slice(0, 1));
    expect(firstOnly.body.meta.total).toBe(wanted.length);
  });

  it('holds the entries the service writes with its changes: logins, tasks, credential reads', async () => {
    // Prepare
    const user = await newUser('service');
    const created = await call(tasks, 'POST', '/tasks', as(user, { body: { title: 'Logged task' } }));
    await call(credentials, 'POST', '/credentials', as(user, { body: { key: 'deploy-token', value: 'v-secret' } }));
    await call(credentials, 'GET', '/credentials/deploy-token', as(user));

    // Act
    const response = await list(user, { actor_id: `user:${user.id}` });

    // Assess
    const byAction = [...response.body.data].sort((a, b) => a.action.localeCompare(b.action));
    expect(byAction).toEqual([
      expect.objectContaining({ action: 'credential.read', entity_type: 'credential', entity_id: 'deploy-token' }),
      expect.objectContaining({ action: 'task.created', entity_type: 'task', entity_id: String(created.body.data.id) }),
      expect.objectContaining({ action: 'user.login', entity_type: 'user', entity_id: String(user.id) }),
    ]);
    expect(response.body.meta.total).toBe(3);
    expect(response.body.data.every((entry: { recorded_by: string | null }) => entry.recorded_by === null)).toBe(true);
    expect(JSON.stringify(response.body)).not.toContain('v-secret');
  });

  it('shows an organization nothing of another’s log, whatever the filter', async () => {
    // Prepare
    const owner = await seeded();
    const stranger = await newUser('stranger');

    // Act
    const all = await list(stranger);
    const byActor = await list(stranger, { actor_id: 'agent:scout' });
    const byAction = await list(stranger, { action: 'deploy.started' });
    const both = await list(stranger, { actor_id: 'agent:scout', action: 'deploy.started' });
    const stats = await call(activityLog, 'GET', '/activity-log/stats', as(stranger));

    // Assess
    expect(lines(all.body)).toEqual([`user.login user:${stranger.id}`]);
    for (const response of [byActor, byAction, both])
      expect(response.body).toMatchObject({ data: [], meta: { total: 0 } });
    expect(stats.body.data.last_7d).toMatchObject({ total: 1, by_action: { 'user.login': 1 } });
    expect(JSON.stringify([all.body, stats.body])).not.toContain(owner.orgId);
  });

  it('keeps entries for 90 days after their day: older ones are neither listed nor counted', async () => {
    // Prepare
    const user = await newUser('retention');
    const now = Date.now();
    await post(user, { actor_type: 'system', actor_id: 'system', action: 'old.kept' }, new Date(now - 89 * DAY));
    await post(user, { actor_type: 'system', actor_id: 'system', action: 'old.gone' }, new Date(now - 92 * DAY));

    // Act
    const all = await list(user, { actor_type: 'system' });
    const gone = await list(user, { action: 'old.gone' });
    const byActor = await list(user, { actor_id: 'system' });

    // Assess
    expect(lines(all.body)).toEqual(['old.kept system']);
    expect(all.body.meta.total).toBe(1);
    expect(gone.body).toMatchObject({ data: [], meta: { total: 0 } });
    expect(byActor.body.meta.total).toBe(1);
  });

  it.each([
    [{ actor_type: 'robot' }, 'query.actor_type'],
    [{ actor_id: 'a#b' }, 'query.actor_id'],
    [{ action: 'has space' }, 'query.action'],
    [{ limit: '-1' }, 'query.limit'],
    [{ offset: 'x' }, 'query.offset'],
  ])('answers 400 for %o', async (query, path) => {
    const user = await newUser('badquery');
    const response = await list(user, query);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ path })]);
  });

  it('answers 401 without a credential', async () => {
    expect((await call(activityLog, 'GET', '/activity-log')).status).toBe(401);
    expect((await call(activityLog, 'GET', '/activity-log/stats')).status).toBe(401);
  });
});

describe('GET /activity-log/stats', () => {
  it('counts by actor type and action in the last 24 hours and 7 days, leaving older entries out', async () => {
    // Prepare: entries 2 hours, 25 hours, 6 days and 8 days ago (the clock port writes them then).
    const user = await newUser('stats');
    const now = Date.now();
    const at = (ms: number) => new Date(now - ms);
    await post(user, { actor_type: 'agent', actor_id: 'agent:a', action: 'deploy.started' }, at(2 * HOUR));
    await post(user, { actor_type: 'agent', actor_id: 'agent:b', action: 'deploy.started' }, at(2 * HOUR));
    await post(user, { actor_type: 'system', actor_id: 'system', action: 'deploy.finished' }, at(2 * HOUR));
    await post(user, { actor_type: 'user', actor_id: 'user:1', action: 'deploy.started' }, at(25 * HOUR));
    await post(user, { actor_type: 'api_key', actor_id: 'api_key:k', action: 'report.written' }, at(6 * DAY));
    await post(user, { actor_type: 'agent', actor_id: 'agent:a', action: 'too.old' }, at(8 * DAY));

    // Act
    const response = await call(activityLog, 'GET', '/activity-log/stats', as(user));

    // Assess: the login (now, a user) counts in both windows.
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      generated_at: expect.any(String),
      last_24h: {
        since: expect.any(String),
        total: 4,
        by_actor_type: { agent: 2, system: 1, user: 1, api_key: 0 },
        by_action: { 'deploy.started': 2, 'deploy.finished': 1, 'user.login': 1 },
      },
      last_7d: {
        since: expect.any(String),
        total: 6,
        by_actor_type: { agent: 2, system: 1, user: 2, api_key: 1 },
        by_action: { 'deploy.started': 3, 'deploy.finished': 1, 'report.written': 1, 'user.login': 1 },
      },
    });
    expect(Object.keys(response.body.data.last_7d.by_action)[0]).toBe('deploy.started');
    const since24h = Date.parse(response.body.data.last_24h.since);
    expect(now - since24h).toBeGreaterThanOrEqual(23 * HOUR);
    expect(now - since24h).toBeLessThan(24 * HOUR);
  });

  it('answers zeros for an organization whose only entry is older than 7 days', async () => {
    // Prepare: the login is the one recent entry; this organization's user logged in now.
    const user = await newUser('quiet');
    await post(user, { actor_type: 'system', actor_id: 'system', action: 'ancient' }, new Date(Date.now() - 10 * DAY));

    // Act
    const response = await call(activityLog, 'GET', '/activity-log/stats', as(user));

    // Assess
    expect(response.body.data.last_7d).toMatchObject({
      total: 1,
      by_actor_type: { agent: 0, system: 0, user: 1, api_key: 0 },
      by_action: { 'user.login': 1 },
    });
  });
});
