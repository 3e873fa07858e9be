import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { backupsDir } from '#lib/app/blobs';
import { exportLines, MAX_EXPORT_ITEMS } from '#lib/backups/backup-export';
import { BACKUP_FILENAME_PATTERN, backupKeys, MAX_BACKUPS_KEPT } from '#lib/backups/backup-keys';
import { appendLogLine } from '#lib/backups/backup-records';
import { table } from '#lib/db/table';
import { UnprocessableError } from '#lib/errors';
import type { BlobStore } from '#lib/kernel/ports';
import { activityOf } from '#tests/support/activity';
import { backupsApi, dataTree, recordingBlobs, send, unpack } from '#tests/support/backups';
import { type CallOptions, call, joinOrganization, newUser, type TestUser } from '#tests/support/identity';
import { createTask } from '#tests/support/tasks';

beforeAll(async () => {
  // The first user of this file's table is the instance admin; every other user is an ordinary one.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function trigger(api: ReturnType<typeof backupsApi>, user: TestUser) {
  const response = await call(api.handler, 'POST', '/backups/trigger', as(user));
  if (response.status !== 200) throw new Error(`trigger failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { filename: string; size_bytes: number; sha256: string; item_count: number };
}

const fileOf = (orgId: string, filename: string) => join(backupsDir(), orgId, filename);

describe('POST /backups/trigger', () => {
  it('writes a gzip JSON export of the organization and answers its record', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = backupsApi();
    await createTask(owner, { title: 'Back me up', assignee: 'alice' });

    // Act
    const response = await call(api.handler, 'POST', '/backups/trigger', as(owner));

    // Assess
    expect(response.status).toBe(200);
    const backup = response.body.data;
    expect(backup).toEqual({
      filename: expect.stringMatching(BACKUP_FILENAME_PATTERN),
      status: 'complete',
      size_bytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      item_count: expect.any(Number),
      created_at: expect.any(String),
      completed_at: expect.any(String),
      created_by: `user:${owner.id}`,
    });
    expect(backup.filename.startsWith(`backup-${owner.orgId}-`)).toBe(true);
    const bytes = readFileSync(fileOf(owner.orgId, backup.filename));
    expect(bytes.length).toBe(backup.size_bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(backup.sha256);
    const document = unpack({ body: bytes.toString('base64'), isBase64Encoded: true });
    expect(document).toMatchObject({ format: 'agent-operations-backup', version: 1, org_id: owner.orgId });
    expect(document.items).toHaveLength(backup.item_count);
    expect(document.item_count).toBe(backup.item_count);
    const keys = document.items.map((item) => `${item.pk?.S}|${item.sk?.S}`);
    expect(keys).toContain(`T#${owner.orgId}|ORG`);
    expect(keys.some((key) => key.startsWith(`T#${owner.orgId}|TASK#`))).toBe(true);
    expect(keys.some((key) => key.startsWith(`T#${owner.orgId}#QUEUE#alice|TASK#`))).toBe(true);
    expect(keys.some((key) => key.startsWith(`T#${owner.orgId}#ACTIVITY#user|`))).toBe(true);
    expect(keys.every((key) => key.startsWith(`T#${owner.orgId}|`) || key.startsWith(`T#${owner.orgId}#`))).toBe(true);
    expect(keys.some((key) => key.includes('#BACKUPS'))).toBe(false);
    expect(await activityOf(owner.orgId)).toContainEqual(
      expect.objectContaining({ action: 'backup.created', entity_type: 'backup', entity_id: backup.filename }),
    );
  });

  it('is for organization admins and owners: a member is refused and nothing is stored', async () => {
    // Prepare
    const owner = await newUser('owner');
    const member = await newUser('member');
    await joinOrganization(member, owner.orgId, 'member');
    const api = backupsApi();

    // Act
    const response = await call(api.handler, 'POST', '/backups/trigger', {
      ...as(member),
      headers: { 'x-organization-id': owner.orgId },
    });

    // Assess
    expect(response.status).toBe(403);
    expect(api.store.calls).toEqual([]);
  });

  it('answers 409 once the organization keeps the most backups it may, storing nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = backupsApi();
    await table.put({ Item: { ...backupKeys.stats(owner.orgId), backups: MAX_BACKUPS_KEPT, size_bytes: 0 } });

    // Act
    const response = await call(api.handler, 'POST', '/backups/trigger', as(owner));

    // Assess
    expect(response.status).toBe(409);
    expect(api.store.calls).toEqual([]);
  });

  it('keeps no record, file or count of a backup whose file could not be written, and logs why', async () => {
    // Prepare
    const owner = await newUser('owner');
    const failing: BlobStore = {
      ...recordingBlobs(),
      put: async (_key, body) => {
        for await (const _chunk of body) throw new Error('disk full');
        return { size: 0 };
      },
    };
    const api = backupsApi(recordingBlobs(failing));

    // Act
    const response = await call(api.handler, 'POST', '/backups/trigger', as(owner));
    const listed = await call(api.handler, 'GET', '/backups', as(owner));
    const stats = await call(api.handler, 'GET', '/backups/stats', as(owner));
    const logs = await call(api.handler, 'GET', '/backups/logs', as(owner));

    // Assess
    expect(response.status).toBe(500);
    expect(listed.body.data).toEqual([]);
    expect(stats.body.data).toEqual({ count: 0, total_size_bytes: 0, last_backup: null });
    expect(logs.body.data.lines).toEqual([
      expect.stringMatching(/ ERROR backup-.*: failed, nothing kept: an internal error \(trace [\w-]+\)$/),
    ]);
    expect(logs.body.data.lines[0]).not.toContain('disk full');
  });

  it('stops an export past its item limit with 422', async () => {
    // Prepare
    const owner = await newUser('owner');
    for (const title of ['One', 'Two', 'Three']) await createTask(owner, { title });

    // Act
    const reading = (async () => {
      for await (const _line of exportLines(owner.orgId, new Date().toISOString(), { items: 0 }, 5));
    })();

    // Assess
    await expect(reading).rejects.toBeInstanceOf(UnprocessableError);
    expect(MAX_EXPORT_ITEMS).toBeGreaterThanOrEqual(100_000);
  });
});

describe('GET /backups, /backups/stats, /backups/logs', () => {
  it('lists newest first, sums sizes, names the last backup and tails the log', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = backupsApi();
    const first = await trigger(api, owner);
    await createTask(owner, { title: 'Between backups' });
    const second = await trigger(api, owner);

    // Act
    const listed = await call(api.handler, 'GET', '/backups', as(owner));
    const paged = await call(api.handler, 'GET', '/backups', as(owner, { query: { limit: '1', offset: '1' } }));
    const stats = await call(api.handler, 'GET', '/backups/stats', as(owner));
    const logs = await call(api.handler, 'GET', '/backups/logs', as(owner));

    // Assess
    expect(listed.body.data.map((backup: { filename: string }) => backup.filename)).toEqual([
      second.filename,
      first.filename,
    ]);
    expect(listed.body.meta).toEqual({ total: 2, limit: 50, offset: 0 });
    expect(paged.body.data.map((backup: { filename: string }) => backup.filename)).toEqual([first.filename]);
    expect(stats.body.data).toEqual({
      count: 2,
      total_size_bytes: first.size_bytes + second.size_bytes,
      last_backup: expect.objectContaining({ filename: second.filename, sha256: second.sha256 }),
    });
    expect(logs.body.data.lines).toEqual([
      expect.stringMatching(new RegExp(`^\\S+Z INFO ${first.filename}: created, ${first.item_count} items, `)),
      expect.stringMatching(new RegExp(`^\\S+Z INFO ${second.filename}: created, ${second.item_count} items, `)),
    ]);
  });

  it('answers the last 100 log lines, oldest first', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = backupsApi();
    const start = Date.parse('2025-03-01T00:00:00Z');
    for (let n = 1; n <= 105; n += 1) {
      await appendLogLine(owner.orgId, 'info', `line ${n}`, new Date(start + n * 1000));
    }

    // Act
    const logs = await call(api.handler, 'GET', '/backups/logs', as(owner));

    // Assess
    expect(logs.status).toBe(200);
    expect(logs.body.data.lines).toHaveLength(100);
    expect(logs.body.data.lines[0]).toBe('2025-03-01T00:00:06.000Z INFO line 6');
    expect(logs.body.data.lines[99]).toBe('2025-03-01T00:01:45.000Z INFO line 105');
  });
});

describe('GET /backups/{filename}/download', () => {
  it('streams the file as application/gzip, an attachment, with its digest', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = backupsApi();
    const backup = await trigger(api, owner);

    // Act
    const response = await send(api.handler, 'GET', `/api/backups/${backup.filename}/download`, owner);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.isBase64Encoded).toBe(true);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/gzip',
      'Content-Disposition': `attachment; filename="${backup.filename}"`,
      'X-Backup-SHA256': backup.sha256,
    });
    const bytes = Buffer.from(response.body ?? '', 'base64');
    expect(bytes.equals(readFileSync(fileOf(owner.orgId, backup.filename)))).toBe(true);
    expect(unpack(response).org_id).toBe(owner.orgId);
  });

  it('answers 404 for a name of this organization that no backup has, reading no file', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = backupsApi();

    // Act
    const response = await send(
      api.handler,
      'GET',
      `/api/backups/backup-${owner.orgId}-20250301T100000000Z.json.gz/download`,
      owner,
    );

    // Assess
    expect(response.statusCode).toBe(404);
    expect(api.store.calls).toEqual([]);
  });
});

describe('DELETE /backups/{filename}', () => {
  it('removes the record and the file, and counts it out', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = backupsApi();
    const kept = await trigger(api, owner);
    const doomed = await trigger(api, owner);

    // Act
    const response = await call(api.handler, 'DELETE', `/backups/${doomed.filename}`, as(owner));
    const again = await call(api.handler, 'DELETE', `/backups/${doomed.filename}`, as(owner));
    const stats = await call(api.handler, 'GET', '/backups/stats', as(owner));
    const listed = await call(api.handler, 'GET', '/backups', as(owner));
    const logs = await call(api.handler, 'GET', '/backups/logs', as(owner));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: expect.objectContaining({ filename: doomed.filename }),
      meta: { deleted: true },
    });
    expect(again.status).toBe(404);
    expect(() => readFileSync(fileOf(owner.orgId, doomed.filename))).toThrow(/ENOENT/);
    expect(readFileSync(fileOf(owner.orgId, kept.filename)).length).toBe(kept.size_bytes);
    expect(stats.body.data).toMatchObject({ count: 1, total_size_bytes: kept.size_bytes });
    expect(listed.body.data.map((backup: { filename: string }) => backup.filename)).toEqual([kept.filename]);
    expect(logs.body.data.lines.at(-1)).toMatch(new RegExp(`INFO ${doomed.filename}: deleted by user:${owner.id}$`));
  });
});

describe('GET /backups/remote-status', () => {
  it('reports the latest copy in sync, then a changed copy, a missing file and an unrecorded one', async () => {
    // Prepare
    const owner = await newUser('owner');
    const api = backupsApi();
    const older = await trigger(api, owner);
    const latest = await trigger(api, owner);

    // Act
    const inSync = await call(api.handler, 'GET', '/backups/remote-status', as(owner));
    writeFileSync(fileOf(owner.orgId, latest.filename), 'tampered');
    writeFileSync(fileOf(owner.orgId, `backup-${owner.orgId}-20200101T000000000Z.json.gz`), 'stray');
    await api.store.delete(`${owner.orgId}/${older.filename}`);
    const broken = await call(api.handler, 'GET', '/backups/remote-status', as(owner));

    // Assess
    expect(inSync.body.data).toEqual({
      store: 'local',
      checked_at: expect.any(String),
      latest: {
        filename: latest.filename,
        created_at: expect.any(String),
        recorded: { size_bytes: latest.size_bytes, sha256: latest.sha256 },
        remote: { size_bytes: latest.size_bytes, sha256: latest.sha256, last_modified: expect.any(String) },
        in_sync: true,
      },
      recorded_count: 2,
      remote_count: 2,
      missing_remotely: [],
      not_recorded: [],
      listing_complete: true,
      in_sync: true,
    });
    expect(broken.body.data).toMatchObject({
      latest: {
        filename: latest.filename,
        remote: { size_bytes: 8, sha256: createHash('sha256').update('tampered').digest('hex') },
        in_sync: false,
      },
      missing_remotely: [older.filename],
      not_recorded: [`backup-${owner.orgId}-20200101T000000000Z.json.gz`],
      in_sync: false,
    });
  });
});

describe('file names that are not exactly one of this organization’s backups', () => {
  let owner: TestUser;
  let other: TestUser;
  let theirs: string;
  let ours: string;
  beforeAll(async () => {
    owner = await newUser('owner');
    other = await newUser('other');
    ours = (await trigger(backupsApi(), owner)).filename;
    theirs = (await trigger(backupsApi(), other)).filename;
  });

  const hostile = () => [
    '..',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e%2f%2e%2e%2fmaster.key',
    '%2E%2E%2F',
    '%252e%252e%252fmaster.key',
    '%25252e%25252e',
    '%2Fetc%2Fpasswd',
    '%2F..%2F..%2Fmaster.key',
    '..%5C..%5Cmaster.key',
    '%5Cetc%5Cpasswd',
    '%00',
    `${ours}%00`,
    `${ours}%00.txt`,
    `${ours}%2F..%2F..%2Fmaster.key`,
    `..%2F${theirs.split('-')[1]}%2F${theirs}`,
    ours.replace('.json.gz', '%2Ejson%2Egz'),
    ours.replace('backup-', '%62ackup-'),
    `.${ours}`,
    `${ours}.tmp`,
    ours.toUpperCase(),
    ours.replace('Z.json', 'Z..json'),
    `backup-${owner.orgId}-2025.json.gz`,
    'x'.repeat(500),
  ];

  it.each([
    ['GET', (name: string) => `/api/backups/${name}/download`],
    ['DELETE', (name: string) => `/api/backups/${name}`],
    ['POST', (name: string) => `/api/backups/${name}/restore`],
    ['GET', (name: string) => `/api/v1/backups/${name}/download`],
  ])('%s %s answers 400 and touches no storage', async (method, path) => {
    // Prepare
    const api = backupsApi();
    const filesBefore = dataTree();
    const recordsBefore = await call(api.handler, 'GET', '/backups', as(other));

    // Act
    const responses = [];
    for (const name of hostile())
      responses.push([name, (await send(api.handler, method, path(name), owner)).statusCode]);

    // Assess
    expect(responses.filter(([, status]) => status !== 400)).toEqual([]);
    expect(api.store.calls).toEqual([]);
    expect(dataTree()).toEqual(filesBefore);
    expect((await call(api.handler, 'GET', '/backups', as(other))).body).toEqual(recordsBefore.body);
  });

  it.each([
    ['GET', (name: string) => `/api/backups/${name}/download`],
    ['DELETE', (name: string) => `/api/backups/${name}`],
    ['POST', (name: string) => `/api/backups/${name}/restore`],
  ])('%s %s answers 404 for another organization’s backup and touches no storage', async (method, path) => {
    // Prepare
    const api = backupsApi();
    const filesBefore = dataTree();

    // Act
    const response = await send(api.handler, method, path(theirs), owner);

    // Assess
    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body ?? '{}').error.code).toBe('NOT_FOUND');
    expect(api.store.calls).toEqual([]);
    expect(dataTree()).toEqual(filesBefore);
    expect(readFileSync(fileOf(other.orgId, theirs)).length).toBeGreaterThan(0);
  });

  it('answers 404 or 405 for names with raw separators, which reach no backup route', async () => {
    // Prepare
    const api = backupsApi();
    const filesBefore = dataTree();

    // Act
    const statuses = [
      (await send(api.handler, 'GET', '/api/backups/../../master.key/download', owner)).statusCode,
      (await send(api.handler, 'DELETE', `/api/backups/../${other.orgId}/${theirs}`, owner)).statusCode,
      (await send(api.handler, 'DELETE', '/api/backups/../download', owner)).statusCode,
    ];

    // Assess
    expect(statuses).toEqual([404, 404, 405]);
    expect(api.store.calls).toEqual([]);
    expect(dataTree()).toEqual(filesBefore);
  });

  it('keeps each organization to its own backups', async () => {
    // Prepare
    const api = backupsApi();

    // Act
    const ownList = await call(api.handler, 'GET', '/backups', as(owner));
    const otherList = await call(api.handler, 'GET', '/backups', as(other));
    const otherStatus = await call(api.handler, 'GET', '/backups/remote-status', as(other));

    // Assess
    expect(ownList.body.data.map((backup: { filename: string }) => backup.filename)).toEqual([ours]);
    expect(otherList.body.data.map((backup: { filename: string }) => backup.filename)).toEqual([theirs]);
    expect(JSON.stringify(otherStatus.body)).not.toContain(owner.orgId);
    expect(api.store.calls.filter((entry) => entry.includes(owner.orgId))).toEqual([]);
    expect(readFileSync(fileOf(other.orgId, theirs)).length).toBeGreaterThan(0);
  });
});
