import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { agentsHandler } from '#functions/http/agents';
import { handler as apiKeys } from '#functions/http/api-keys';
import { handler as credentials } from '#functions/http/credentials';
import { discoveryEnginesHandler } from '#functions/http/discovery-engines';
import { handler as factoryWorkers } from '#functions/http/factory-workers';
import { handler as files } from '#functions/http/files';
import { handler as logs } from '#functions/http/logs';
import { handler as rules } from '#functions/http/rules';
import { handler as taskQueue } from '#functions/http/task-queue';
import { handler as teams } from '#functions/http/teams';
import { handler as tokens } from '#functions/http/tokens';
import { discoveryRunHandler } from '#functions/schedule/discovery-run';
import { recordActivity } from '#lib/activity/activity-log';
import { localRunner } from '#lib/adapters/local/local-runner';
import { backupsDir } from '#lib/app/blobs';
import { backupKeys } from '#lib/backups/backup-keys';
import { table } from '#lib/db/table';
import { backupsApi, isIdentity, organizationItems, unpack, wipe } from '#tests/support/backups';
import { type CallOptions, call, joinOrganization, newUser, type TestUser } from '#tests/support/identity';
import { recordingScheduler } from '#tests/support/scheduler';
import { createProduct, createTask, listTasks, moveTask } from '#tests/support/tasks';

beforeAll(async () => {
  // The first user of this file's table is the instance admin; every other user is an ordinary one.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function ok(response: Promise<{ status: number; body: unknown }>, expected = [200, 201]) {
  const answered = await response;
  if (!expected.includes(answered.status)) throw new Error(`seeding failed: ${JSON.stringify(answered.body)}`);
  return answered.body as { data: Record<string, unknown> };
}

/**
 * An organization with a little of everything, made through the API: products, tasks (queued, assigned,
 * done), an agent with a schedule, a pipeline, a sealed credential, token consumption in the ledger, an
 * API key (and a use of it), a team, a log line, a file, a rule, a discovery engine with a run, a queued
 * job and a factory setting.
 */
async function seed(owner: TestUser): Promise<{ apiKey: string }> {
  const agents = agentsHandler({ ports: { scheduler: recordingScheduler() } });
  const pipelines = agentPipelinesHandler();
  const product = await createProduct(owner, 'Rocket');
  await createTask(owner, { title: 'Plan the launch', assignee: 'alice', product_slug: product.slug, priority: 'P1' });
  const done = await createTask(owner, { title: 'Order fuel', assignee: 'bob' });
  await moveTask(owner, done.id, 'in_progress', 'done');
  await createTask(owner, { title: 'Unassigned work', tags: 'ops' });
  await ok(call(agents, 'POST', '/agents', as(owner, { body: { name: 'builder', interval_sec: 300 } })));
  await ok(
    call(
      pipelines,
      'POST',
      '/agent-pipelines',
      as(owner, { body: { name: 'Ship', stages: [{ name: 'test', agent: 'qa-tester', depends_on: [] }] } }),
    ),
  );
  await ok(call(credentials, 'POST', '/credentials', as(owner, { body: { key: 'llm.api_key', value: 'sk-secret' } })));
  await ok(
    call(
      tokens,
      'POST',
      '/tokens/consume',
      as(owner, { body: { amount: 250, action: 'agent_run', reference_id: 'run-1' } }),
    ),
  );
  const key = await ok(
    call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, as(owner, { body: { name: 'ci' } })),
  );
  await ok(call(teams, 'POST', '/teams', as(owner, { body: { name: 'Core' } })));
  await ok(call(logs, 'POST', '/logs', as(owner, { body: { agent: 'builder', message: 'Started' } })));
  await ok(
    call(files, 'POST', '/files', as(owner, { body: { name: 'plan.md', path: 'docs/plan.md', content: '# Plan' } })),
  );
  await ok(call(rules, 'POST', '/rules', as(owner, { body: { rule: 'Test before merging', permanent: true } })));
  const scheduler = recordingScheduler();
  const engine = await ok(
    call(
      discoveryEnginesHandler({ ports: { scheduler } }),
      'POST',
      '/discovery-engines',
      as(owner, { body: { name: 'Market scan', layer: 'market' } }),
    ),
  );
  const run = discoveryRunHandler({ runner: localRunner(), scheduler });
  await run({ org_id: owner.orgId, engine_id: engine.data.id as number, slug: engine.data.slug as string });
  await ok(
    call(taskQueue, 'POST', '/task-queue/submit', as(owner, { body: { task_type: 'echo', payload: { n: 1 } } })),
  );
  await ok(
    call(
      factoryWorkers,
      'PATCH',
      '/factory-workers/config',
      as(owner, { body: { worker_count: 2, max_concurrent: 4 } }),
    ),
  );
  const apiKey = key.data.key as string;
  await ok(listTasks({ ...owner, token: apiKey }));
  return { apiKey };
}

type Item = Awaited<ReturnType<typeof organizationItems>>[number];

const keyOf = (item: Item) => `${item.pk}|${item.sk}`;
const isCount = (item: Item) => item.pk.endsWith('#ACTIVITYCOUNT');
/** Task search postings: derived from the tasks, not in a backup, rebuilt by the restore. */
const isPosting = (item: Item) => item.pk.endsWith('#TASKTERMS');

/** Count items summed over their shards (`…#<shard>` dropped): what the activity stats read. */
function countTotals(items: Item[]): Map<string, Record<string, number>> {
  const totals = new Map<string, Record<string, number>>();
  for (const item of items.filter(isCount)) {
    const group = item.sk.replace(/#\d+$/, '');
    const sums = totals.get(group) ?? {};
    for (const [name, value] of Object.entries(item)) {
      if (typeof value === 'number' && name !== 'expires_at') sums[name] = (sums[name] ?? 0) + value;
    }
    totals.set(group, sums);
  }
  return totals;
}

/** Two sets of count totals added together, group by group. */
function summed(a: Map<string, Record<string, number>>, b: Map<string, Record<string, number>>) {
  const result = new Map([...a].map(([group, sums]) => [group, { ...sums }]));
  for (const [group, sums] of b) {
    const into = result.get(group) ?? {};
    for (const [name, value] of Object.entries(sums)) into[name] = (into[name] ?? 0) + value;
    result.set(group, into);
  }
  return result;
}

/** `totals` with the counts that activity `entries` add (their hour, action and actor, each by one). */
function withEntries(totals: Map<string, Record<string, number>>, entries: Item[]) {
  const result = new Map([...totals].map(([group, sums]) => [group, { ...sums }]));
  for (const entry of entries) {
    const hour = String(entry.created_at).slice(0, 13);
    const type = String(entry.actor_type);
    for (const group of [`HOUR#${hour}`, `ACTION#${entry.action}#${hour}`, `ACTOR#${entry.actor_id}#${hour}`]) {
      const sums = result.get(group) ?? {};
      result.set(group, { ...sums, total: (sums.total ?? 0) + 1, [type]: (sums[type] ?? 0) + 1 });
    }
  }
  return result;
}

async function restore(
  api: ReturnType<typeof backupsApi>,
  user: TestUser,
  filename: string,
  options: CallOptions = {},
) {
  return call(api.handler, 'POST', `/backups/${filename}/restore`, as(user, options));
}

async function trigger(api: ReturnType<typeof backupsApi>, user: TestUser) {
  const response = await call(api.handler, 'POST', '/backups/trigger', as(user));
  if (response.status !== 200) throw new Error(`trigger failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { filename: string; item_count: number };
}

describe('POST /backups/{filename}/restore', () => {
  it('brings a lost organization back item for item: export, loss, restore', async () => {
    // Prepare
    const owner = await newUser('owner');
    const { apiKey } = await seed(owner);
    const api = backupsApi();
    const tasksBefore = (await listTasks(owner)).body;
    const foundBefore = (await listTasks(owner, { q: 'fuel' })).body;
    const balanceBefore = (await call(tokens, 'GET', '/tokens/balance', as(owner))).body.data.balance;
    const before = await organizationItems(owner.orgId);
    const backup = await trigger(api, owner);
    await wipe(owner.orgId);
    const lost = await organizationItems(owner.orgId);

    // Act
    const response = await restore(api, owner, backup.filename);
    const after = await organizationItems(owner.orgId);

    // Assess
    expect(lost.every(isIdentity)).toBe(true);
    expect(response.status).toBe(200);
    const identity = before.filter(isIdentity).length;
    expect(response.body.data).toEqual({
      filename: backup.filename,
      restored_items: backup.item_count - identity,
      kept_identity_records: identity,
      skipped_lookups: 0,
      restored_at: expect.any(String),
    });
    expect(before.map(keyOf)).toEqual(
      expect.arrayContaining([
        `APIKEYHASH#${before.find((item) => item.sk.startsWith('APIKEY#'))?.key_hash}|APIKEYHASH`,
        `T#${owner.orgId}|CRED#llm.api_key`,
        `T#${owner.orgId}|TOKENS`,
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#QUEUE#alice\\|`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#LOGS\\|`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#METRICS\\|`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#FILES\\|`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#DISCOVERYRUNS#`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#JOBS\\|`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#JQ\\|`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#FACTORY\\|`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}\\|RULE#`)),
        expect.stringMatching(new RegExp(`^T#${owner.orgId}#APIKEYUSE#`)),
      ]),
    );
    // Every item is back as it was, beside the restore's own activity entry and its counts.
    const own = after.filter((item) => item.action === 'backup.restored' && !isCount(item));
    expect(own).toHaveLength(1);
    const rest = after.filter((item) => !own.includes(item));
    const recorded = (item: Item) => !isCount(item) && !isPosting(item);
    expect(rest.filter(recorded)).toEqual(before.filter(recorded));
    expect(countTotals(after)).toEqual(withEntries(countTotals(before), own));
    // The search postings are rebuilt: the same terms of the same tasks.
    expect(after.filter(isPosting).map(keyOf)).toEqual(before.filter(isPosting).map(keyOf));
    expect(after.filter(isPosting).length).toBeGreaterThan(0);
    // And the organization works as before: its tasks, its sealed credential, its API key, its balance.
    expect((await listTasks(owner)).body).toEqual(tasksBefore);
    expect((await listTasks(owner, { q: 'fuel' })).body).toEqual(foundBefore);
    expect(foundBefore.meta.total).toBe(1);
    const secret = await call(credentials, 'GET', '/credentials/llm.api_key', as(owner));
    expect(secret.body.data.value).toBe('sk-secret');
    expect((await listTasks({ ...owner, token: apiKey })).status).toBe(200);
    const balance = await call(tokens, 'GET', '/tokens/balance', as(owner));
    expect(balanceBefore).toBeLessThan(10_000 - 250);
    expect(balance.body.data.balance).toBe(balanceBefore);
  });

  it('keeps what the activity log received since the loss, and adds the backup’s counts to it', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTask(owner, { title: 'Before the loss' });
    const api = backupsApi();
    const before = await organizationItems(owner.orgId);
    const backup = await trigger(api, owner);
    await wipe(owner.orgId);
    // Counted since the loss: one more of everything in each count item the backup holds (the same shards),
    // and a login with its entry and counts.
    for (const count of before.filter(isCount)) {
      const ones = Object.entries(count).map(([name, value]) =>
        typeof value === 'number' && name !== 'expires_at' ? [name, 1] : [name, value],
      );
      await table.put({ Item: Object.fromEntries(ones) });
    }
    await recordActivity(
      owner.orgId,
      { actor_type: 'user', actor_id: `user:${owner.id}`, action: 'user.login' },
      new Date(),
    );
    const since = countTotals(await organizationItems(owner.orgId));

    // Act
    const response = await restore(api, owner, backup.filename);
    const after = await organizationItems(owner.orgId);

    // Assess
    expect(response.status).toBe(200);
    const known = new Set(before.map(keyOf));
    const added = after.filter((item) => !known.has(keyOf(item)) && !isCount(item));
    expect(added.map((item) => item.action).sort()).toEqual(['backup.restored', 'user.login']);
    expect(after.filter((item) => !isCount(item) && !added.includes(item))).toEqual(
      before.filter((item) => !isCount(item)),
    );
    const restoredEntry = added.filter((item) => item.action === 'backup.restored');
    expect(countTotals(after)).toEqual(withEntries(summed(countTotals(before), since), restoredEntry));
  });

  it('answers 409 for an organization that is not empty, and writes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTask(owner, { title: 'Still here' });
    const api = backupsApi();
    const backup = await trigger(api, owner);
    const before = await organizationItems(owner.orgId);

    // Act
    const response = await restore(api, owner, backup.filename);

    // Assess
    expect(response.status).toBe(409);
    expect(response.body.error.details).toEqual(
      expect.arrayContaining([{ kind: 'TASK', message: 'The organization holds TASK records' }]),
    );
    expect(await organizationItems(owner.orgId)).toEqual(before);
    expect((await table.get({ Key: backupKeys.restore(owner.orgId) })).Item).toBeUndefined();
  });

  it('is for the owner only: an organization admin is refused', async () => {
    // Prepare
    const owner = await newUser('owner');
    const admin = await newUser('admin');
    await joinOrganization(admin, owner.orgId, 'admin');
    const api = backupsApi();
    const backup = await trigger(api, owner);
    await wipe(owner.orgId);

    // Act
    const response = await restore(api, admin, backup.filename, { headers: { 'x-organization-id': owner.orgId } });

    // Assess
    expect(response.status).toBe(403);
    expect((await organizationItems(owner.orgId)).every(isIdentity)).toBe(true);
  });

  it('answers 422 for a file that is not the one recorded, and writes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTask(owner, { title: 'Original' });
    const api = backupsApi();
    const backup = await trigger(api, owner);
    const path = join(backupsDir(), owner.orgId, backup.filename);
    const document = unpack({ body: readFileSync(path).toString('base64'), isBase64Encoded: true });
    document.items.push({ pk: { S: `T#${owner.orgId}` }, sk: { S: 'TASK#000000000999' }, title: { S: 'Planted' } });
    document.item_count += 1;
    await wipe(owner.orgId);
    writeFileSync(path, gzipSync(JSON.stringify(document)));

    // Act
    const response = await restore(api, owner, backup.filename);

    // Assess
    expect(response.status).toBe(422);
    expect((await organizationItems(owner.orgId)).every(isIdentity)).toBe(true);
  });

  it('resumes a restore that stopped midway, and refuses another backup meanwhile', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTask(owner, { title: 'Resumed' });
    const api = backupsApi();
    const first = await trigger(api, owner);
    const second = await trigger(api, owner);
    const before = await organizationItems(owner.orgId);
    await wipe(owner.orgId);
    const task = before.find((item) => item.sk.startsWith('TASK#')) as Item;
    await table.put({ Item: task });
    await table.put({
      Item: { ...backupKeys.restore(owner.orgId), filename: first.filename, started_at: 'x', started_by: 'user:1' },
    });

    // Act
    const other = await restore(api, owner, second.filename);
    const resumed = await restore(api, owner, first.filename);

    // Assess
    expect(other.status).toBe(409);
    expect(resumed.status).toBe(200);
    expect((await table.get({ Key: backupKeys.restore(owner.orgId) })).Item).toBeUndefined();
    expect((await listTasks(owner)).body.data.map((one: { title: string }) => one.title)).toEqual(['Resumed']);
  });
});
