import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler as defaultLogs, logsHandler } from '#functions/http/logs';
import { fileLogSink } from '#lib/adapters/local/file-log-sink';
import { fileLogSource } from '#lib/adapters/local/file-log-source';
import { fixedClock } from '#lib/kernel/clock';
import type { LogSource } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';

/**
 * GET /logs, POST /logs and GET /logs/files against DynamoDB Local: the organization's log lines (`db`)
 * and the service's own log output (`file`, the local log source over a directory of log files the test
 * writes, or the real logger writes), merged newest first, each organization seeing its own lines only.
 */
beforeAll(async () => {
  // The first user of this file's table is its instance admin; every user below is an ordinary one.
  await newUser('instanceadmin');
});

const removeSinks: Array<() => void> = [];
afterEach(() => {
  for (const remove of removeSinks.splice(0)) remove();
  logger.setLogLevel('SILENT');
});

const START = new Date(Math.floor(Date.now() / 1000) * 1000);
const at = (seconds: number) => new Date(START.getTime() + seconds * 1000);

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

/** A log directory holding `lines` as the logger writes them (`seconds` after START). */
function logDir(lines: Array<{ seconds: number } & Record<string, unknown>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'aos-logs-'));
  const text = lines.map(({ seconds, ...fields }) =>
    JSON.stringify({
      level: 'INFO',
      message: `service line at ${seconds}`,
      timestamp: at(seconds).toISOString(),
      service: 'agent-operations',
      ...fields,
    }),
  );
  writeFileSync(join(dir, 'service.log'), `${text.join('\n')}\n`);
  return dir;
}

/** The logs function over `dir` as its file source, its clock at START moved by each POST. */
function logsOver(dir: string, source: LogSource = fileLogSource(dir)) {
  const clock = fixedClock(START);
  const handler = logsHandler({ ports: { logs: source, clock } });
  return { handler, clock };
}

type Handler = ReturnType<typeof logsHandler>;

/** Posts a line as `user`, the clock then moved a second on. */
async function post(handler: Handler, clock: ReturnType<typeof fixedClock>, user: TestUser, body: object) {
  const response = await call(handler, 'POST', '/logs', as(user, { body }));
  if (response.status !== 201) throw new Error(`POST /logs failed: ${JSON.stringify(response.body)}`);
  clock.advance(1000);
  return response.body.data as { id: string; message: string };
}

const messages = (response: { body: { data: Array<{ message: string }> } }) =>
  response.body.data.map((line) => line.message);

const invalid = (path: string) => ({
  error: {
    code: 'VALIDATION_ERROR',
    message: expect.any(String),
    details: [{ path, message: expect.any(String) }],
  },
});

describe('POST /logs', () => {
  it('stores a line in the organization’s log, info by default, and answers it as GET /logs shows it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const { handler } = logsOver(logDir([]));

    // Act
    const created = await call(handler, 'POST', '/logs', as(owner, { body: { agent: 'builder', message: 'Hello' } }));
    const listed = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'db' } }));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      data: {
        id: `${START.toISOString()}#${created.body.data.id.split('#')[1]}`,
        source: 'db',
        level: 'info',
        agent: 'builder',
        message: 'Hello',
        meta: {},
        origin: null,
        created_at: START.toISOString(),
      },
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([created.body.data]);
  });

  it('keeps the level and meta given', async () => {
    // Prepare
    const owner = await newUser('owner');
    const { handler } = logsOver(logDir([]));
    const body = { agent: 'system', message: 'disk at 91%', level: 'warn', meta: { host: 'a', usage: { pct: 91 } } };

    // Act
    const created = await call(handler, 'POST', '/logs', as(owner, { body }));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ level: 'warn', meta: { host: 'a', usage: { pct: 91 } } });
  });

  it.each([
    ['no agent', { message: 'm' }, 'body.agent'],
    ['a blank agent', { agent: '  ', message: 'm' }, 'body.agent'],
    ['no message', { agent: 'a' }, 'body.message'],
    ['a message over 4000 characters', { agent: 'a', message: 'x'.repeat(4001) }, 'body.message'],
    ['an unknown level', { agent: 'a', message: 'm', level: 'debug' }, 'body.level'],
    ['meta that is not an object', { agent: 'a', message: 'm', meta: ['x'] }, 'body.meta'],
  ])('answers 400 for %s', async (_case, body, path) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(defaultLogs, 'POST', '/logs', as(owner, { body }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(path));
  });

  it('answers 401 without a credential', async () => {
    // Act
    const response = await call(defaultLogs, 'POST', '/logs', { body: { agent: 'a', message: 'm' } });

    // Assess
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
  });
});

describe('GET /logs, the db source', () => {
  it('answers the organization’s lines newest first, at most `limit`', async () => {
    // Prepare
    const owner = await newUser('owner');
    const { handler, clock } = logsOver(logDir([]));
    for (const message of ['one', 'two', 'three']) await post(handler, clock, owner, { agent: 'a', message });

    // Act
    const all = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'db' } }));
    const two = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'db', limit: '2' } }));

    // Assess
    expect(messages(all)).toEqual(['three', 'two', 'one']);
    expect(all.body.meta).toEqual({
      total: 3,
      limit: 50,
      offset: 0,
      sources: { db: 'complete', file: 'skipped' },
    });
    expect(messages(two)).toEqual(['three', 'two']);
    expect(two.body.meta).toMatchObject({ total: 2, limit: 2 });
  });

  it('filters by agent, level and part of the message (ignoring case), combined', async () => {
    // Prepare
    const owner = await newUser('owner');
    const { handler, clock } = logsOver(logDir([]));
    await post(handler, clock, owner, { agent: 'builder', message: 'Deploy started' });
    await post(handler, clock, owner, { agent: 'builder', message: 'Deploy FAILED: timeout', level: 'error' });
    await post(handler, clock, owner, { agent: 'tester', message: 'tests failed', level: 'error' });
    await post(handler, clock, owner, { agent: 'builder', message: 'retrying', level: 'warn' });
    const list = (query: Record<string, string>) =>
      call(handler, 'GET', '/logs', as(owner, { query: { source: 'db', ...query } }));

    // Act
    const byAgent = await list({ agent: 'builder' });
    const byLevel = await list({ level: 'error' });
    const byText = await list({ q: 'deploy' });
    const combined = await list({ agent: 'builder', level: 'error', q: 'failed' });
    const none = await list({ agent: 'nobody' });

    // Assess
    expect(messages(byAgent)).toEqual(['retrying', 'Deploy FAILED: timeout', 'Deploy started']);
    expect(messages(byLevel)).toEqual(['tests failed', 'Deploy FAILED: timeout']);
    expect(messages(byText)).toEqual(['Deploy FAILED: timeout', 'Deploy started']);
    expect(messages(combined)).toEqual(['Deploy FAILED: timeout']);
    expect(messages(none)).toEqual([]);
  });

  it('never answers another organization’s lines', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const { handler, clock } = logsOver(logDir([]));
    await post(handler, clock, owner, { agent: 'a', message: 'mine' });
    await post(handler, clock, stranger, { agent: 'a', message: 'theirs' });

    // Act
    const mine = await call(handler, 'GET', '/logs', as(owner));
    const theirs = await call(handler, 'GET', '/logs', as(stranger, { query: { q: 'mine' } }));

    // Assess
    expect(messages(mine)).toEqual(['mine']);
    expect(messages(theirs)).toEqual([]);
  });
});

describe('GET /logs, the file source', () => {
  /** Service lines of two organizations and of none, the newest last. */
  const serviceLines = (mine: string, other: string) => [
    { seconds: -30, message: 'start-up, no organization' },
    { seconds: -20, orgId: mine, message: 'agent tick', agent: 'builder' },
    { seconds: -15, org_id: other, message: 'request rejected', level: 'INFO' },
    { seconds: -10, org_id: mine, message: 'request failed', level: 'ERROR', error: { name: 'E', stack: 'at x' } },
    { seconds: -5, orgId: other, message: 'agent tick', agent: 'builder' },
    { seconds: 10, org_id: mine, message: 'pipeline stage failed', level: 'WARN', agent: 'reviewer' },
  ];

  it('answers only the lines that name the caller’s organization, with their level, agent and origin', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const { handler } = logsOver(logDir(serviceLines(owner.orgId, stranger.orgId)));

    // Act
    const mine = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'file' } }));
    const theirs = await call(handler, 'GET', '/logs', as(stranger, { query: { source: 'file' } }));

    // Assess
    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        source: 'file',
        level: 'warn',
        agent: 'reviewer',
        message: 'pipeline stage failed',
        meta: {},
        origin: 'service.log',
        created_at: at(10).toISOString(),
      },
      expect.objectContaining({
        level: 'error',
        agent: 'system',
        message: 'request failed',
        meta: { error: { name: 'E' } },
      }),
      expect.objectContaining({
        level: 'info',
        agent: 'builder',
        message: 'agent tick',
        created_at: at(-20).toISOString(),
      }),
    ]);
    expect(mine.body.meta.sources).toEqual({ db: 'skipped', file: 'complete' });
    expect(messages(theirs)).toEqual(['agent tick', 'request rejected']);
    expect(JSON.stringify(theirs.body)).not.toContain(owner.orgId);
    expect(JSON.stringify(mine.body)).not.toContain(stranger.orgId);
  });

  it('applies agent, level, q and limit to the service’s lines', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const { handler } = logsOver(logDir(serviceLines(owner.orgId, stranger.orgId)));
    const list = (query: Record<string, string>) =>
      call(handler, 'GET', '/logs', as(owner, { query: { source: 'file', ...query } }));

    // Act
    const byAgent = await list({ agent: 'builder' });
    const bySystem = await list({ agent: 'system' });
    const byLevel = await list({ level: 'error' });
    const byText = await list({ q: 'STAGE' });
    const limited = await list({ limit: '1' });

    // Assess
    expect(messages(byAgent)).toEqual(['agent tick']);
    expect(messages(bySystem)).toEqual(['request failed']);
    expect(messages(byLevel)).toEqual(['request failed']);
    expect(messages(byText)).toEqual(['pipeline stage failed']);
    expect(messages(limited)).toEqual(['pipeline stage failed']);
  });

  it('says `partial` when the read stopped at its bound with older lines unread', async () => {
    // Prepare
    const owner = await newUser('owner');
    const lines = Array.from({ length: 40 }, (_, index) => ({ seconds: index, orgId: owner.orgId }));
    const dir = logDir(lines);
    const { handler } = logsOver(dir, fileLogSource(dir, { maxScanBytes: 1_000 }));

    // Act
    const response = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'file' } }));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.length).toBeGreaterThan(0);
    expect(response.body.data.length).toBeLessThan(40);
    expect(response.body.data[0].message).toBe('service line at 39');
    expect(response.body.meta.sources.file).toBe('partial');
  });

  it('shows the lines the logger wrote about the caller’s own requests, and not to another organization', async () => {
    // Prepare: the real logger writing to a log file, as under npm start.
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const dir = mkdtempSync(join(tmpdir(), 'aos-logs-'));
    const sink = fileLogSink(dir);
    removeSinks.push(logger.addSink((line) => sink.write(line), 'INFO'));
    const handler = logsHandler({ ports: { logs: fileLogSource(dir) } });
    await call(handler, 'POST', '/logs', as(owner, { body: { agent: 'a' } }));

    // Act
    const mine = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'file' } }));
    const theirs = await call(handler, 'GET', '/logs', as(stranger, { query: { source: 'file' } }));

    // Assess
    expect(mine.body.data).toEqual([
      expect.objectContaining({
        source: 'file',
        level: 'info',
        agent: 'system',
        message: 'request rejected',
        meta: expect.objectContaining({ status: 400, code: 'VALIDATION_ERROR', trace_id: expect.any(String) }),
      }),
    ]);
    expect(theirs.body.data).toEqual([]);
  });
});

describe('GET /logs, both sources', () => {
  it('merges the organization’s lines and the service’s newest first', async () => {
    // Prepare: db lines at 0, 1 and 2 seconds; service lines at -5, 1.5 and 10.
    const owner = await newUser('owner');
    const dir = logDir([
      { seconds: -5, orgId: owner.orgId, message: 'file -5' },
      { seconds: 1.5, orgId: owner.orgId, message: 'file 1.5' },
      { seconds: 10, orgId: owner.orgId, message: 'file 10' },
    ]);
    const { handler, clock } = logsOver(dir);
    for (const message of ['db 0', 'db 1', 'db 2']) await post(handler, clock, owner, { agent: 'a', message });

    // Act
    const merged = await call(handler, 'GET', '/logs', as(owner));
    const limited = await call(handler, 'GET', '/logs', as(owner, { query: { limit: '4', source: 'all' } }));

    // Assess
    expect(messages(merged)).toEqual(['file 10', 'db 2', 'file 1.5', 'db 1', 'db 0', 'file -5']);
    expect(merged.body.data.map((line: { source: string }) => line.source)).toEqual([
      'file',
      'db',
      'file',
      'db',
      'db',
      'file',
    ]);
    expect(merged.body.meta.sources).toEqual({ db: 'complete', file: 'complete' });
    expect(messages(limited)).toEqual(['file 10', 'db 2', 'file 1.5', 'db 1']);
  });

  it('answers the db lines alone when the service’s log cannot be read, 503 when only it was asked', async () => {
    // Prepare
    const owner = await newUser('owner');
    const broken: LogSource = {
      kind: 'cloudwatch',
      read: async () => {
        throw new Error('AccessDeniedException');
      },
      files: async () => [],
    };
    const { handler, clock } = logsOver(logDir([]), broken);
    await post(handler, clock, owner, { agent: 'a', message: 'kept' });

    // Act
    const all = await call(handler, 'GET', '/logs', as(owner));
    const fileOnly = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'file' } }));

    // Assess
    expect(all.status).toBe(200);
    expect(messages(all)).toEqual(['kept']);
    expect(all.body.meta.sources).toEqual({ db: 'complete', file: 'unavailable' });
    expect(fileOnly.status).toBe(503);
    expect(fileOnly.body.error.code).toBe('SERVICE_UNAVAILABLE');
  });

  it.each([
    [{ source: 'disk' }, 'query.source'],
    [{ level: 'debug' }, 'query.level'],
    [{ limit: '-1' }, 'query.limit'],
    [{ limit: 'ten' }, 'query.limit'],
    [{ q: 'x'.repeat(201) }, 'query.q'],
    [{ agent: 'x'.repeat(101) }, 'query.agent'],
  ])('answers 400 for %o', async (query, path) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(defaultLogs, 'GET', '/logs', as(owner, { query }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(path));
  });

  it('answers 429 past 30 reads a minute by one organization, and not to another', async () => {
    // Prepare
    const owner = await newUser('owner');
    const other = await newUser('other');
    const { handler } = logsOver(logDir([]));
    for (let read = 1; read <= 30; read += 1) {
      const response = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'db' } }));
      if (response.status !== 200) throw new Error(`read ${read} answered ${response.status}`);
    }

    // Act
    const refused = await call(handler, 'GET', '/logs', as(owner, { query: { source: 'db' } }));
    const otherOrg = await call(handler, 'GET', '/logs', as(other, { query: { source: 'db' } }));

    // Assess
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(refused.headers['Retry-After'] ?? refused.headers['retry-after']).toBeDefined();
    expect(otherOrg.status).toBe(200);
  });

  it('clamps limit to 200', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(defaultLogs, 'GET', '/logs', as(owner, { query: { limit: '5000' } }));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.meta.limit).toBe(200);
  });
});

describe('GET /logs/files', () => {
  it('lists the log files with their sizes and last writes, the current one first', async () => {
    // Prepare
    const owner = await newUser('owner');
    const dir = logDir([{ seconds: 1, orgId: owner.orgId }]);
    writeFileSync(join(dir, 'service.log.1'), 'older\n');
    const { handler } = logsOver(dir);

    // Act
    const response = await call(handler, 'GET', '/logs/files', as(owner));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        { name: 'service.log', kind: 'file', size_bytes: expect.any(Number), last_modified: expect.any(String) },
        { name: 'service.log.1', kind: 'file', size_bytes: 6, last_modified: expect.any(String) },
      ],
      meta: { total: 2, limit: 2, offset: 0 },
    });
    expect(response.body.data[0].size_bytes).toBeGreaterThan(50);
  });

  it('answers an empty list before anything was logged, and 401 without a credential', async () => {
    // Prepare
    const owner = await newUser('owner');
    const { handler } = logsOver(join(mkdtempSync(join(tmpdir(), 'aos-logs-')), 'logs'));

    // Act
    const empty = await call(handler, 'GET', '/logs/files', as(owner));
    const anonymous = await call(handler, 'GET', '/logs/files');

    // Assess
    expect(empty.body).toEqual({ data: [], meta: { total: 0, limit: 0, offset: 0 } });
    expect(anonymous.status).toBe(401);
  });
});
