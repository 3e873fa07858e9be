import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { handler as apiKeys } from '#functions/http/api-keys';
import { tasksHandler } from '#functions/http/tasks';
import { TASK_CREATION_PER_MINUTE } from '#lib/billing/catalogue';
import { randomBase62, sha256 } from '#lib/crypto/secrets';
import { db, dynamo, TABLE } from '#lib/db/client';
import { table } from '#lib/db/table';
import { NotFoundError } from '#lib/errors';
import { groupHandler, route } from '#lib/http/group-handler';
import { defineRoute } from '#lib/http/route';
import { API_KEY_PREFIX, newApiKey, organizationHint } from '#lib/identity/api-key-format';
import { identityKeys } from '#lib/identity/keys';
import { fixedClock } from '#lib/kernel/clock';
import type { MessageQueue } from '#lib/kernel/ports';
import { rateKey } from '#lib/rate-limit/limiter';
import { contractCovers } from '#tests/support/contract';
import { call, newUser, type TestUser } from '#tests/support/identity';

/**
 * How a request is admitted while its handler already runs: the rate-limit count goes out beside the
 * handler's first reads (and, for a route that names them, beside authentication's), and nothing the
 * handler does leaves the request before the limit has decided. A refused request writes nothing, sends
 * nothing and answers 429, whatever its handler made of it; an API key's use is recorded either way.
 */

beforeAll(async () => {
  await newUser('instanceadmin');
});

const group = 'admission';
const tags = ['Test'];
const params = z.object({ id: z.coerce.number().int().positive() });
const probe = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/probe/{id}',
  auth: 'bearer',
  summary: 'probe',
  params,
});
contractCovers(probe);

/** The start of a minute to come (tokens issued now are valid for an hour from now). */
const minuteAhead = (minutes: number) => new Date((Math.floor(Date.now() / 60_000) + minutes) * 60_000);

/** Fills the organization's current minute up to the free tier's 100 requests. */
async function useUpMinute(orgId: string, at: Date) {
  const seconds = at.getTime() / 1000;
  const hourStart = seconds - (seconds % 3600);
  const minute = Math.floor((seconds - hourStart) / 60);
  await db.send(
    new PutCommand({
      TableName: TABLE,
      Item: {
        ...rateKey(`org#${orgId}`, hourStart),
        hour_count: 100,
        [`m${minute}`]: 100,
        expires_at: hourStart + 7200,
      },
    }),
  );
}

const marker = (id: number) => ({ pk: `ADMISSIONTEST#${id}`, sk: 'MARK' });

/** A route that reads, sends a message and writes, on the free tier's limits, at a fixed minute. */
function probeHandler(at: Date) {
  const sent: unknown[] = [];
  const queue: MessageQueue = {
    send: async (_name, body) => {
      sent.push(body);
    },
  };
  const handler = groupHandler(
    group,
    [
      route(probe, async ({ params, ctx }) => {
        const { Item } = await table.get({ Key: marker(params.id) });
        if (params.id === 404) throw new NotFoundError('nothing here');
        await ctx.ports.queue.send('webhook-delivery', { id: params.id });
        await table.put({ Item: { ...marker(params.id), seen: Item !== undefined } });
        return { ok: true };
      }),
    ],
    { ports: { clock: fixedClock(at), queue }, rateLimits: { overrideTier: 'free' } },
  );
  return { handler, sent };
}

async function storedMarker(id: number) {
  return (await table.get({ Key: marker(id), ConsistentRead: true })).Item;
}

describe('a request the rate limit refuses', () => {
  it('writes nothing and sends nothing, though its handler ran; one admitted does both', async () => {
    // Prepare
    const user = await newUser('limited');
    const at = minuteAhead(2);
    const { handler, sent } = probeHandler(at);
    const refusedId = 7000 + Math.floor(Math.random() * 1000);
    const admittedId = refusedId + 1000;

    // Act
    const admitted = await call(handler, 'POST', `/probe/${admittedId}`, { token: user.token });
    await useUpMinute(user.orgId, at);
    const refused = await call(handler, 'POST', `/probe/${refusedId}`, { token: user.token });

    // Assess
    expect(admitted.status).toBe(200);
    expect(await storedMarker(admittedId)).toBeDefined();
    expect(refused.status).toBe(429);
    expect(refused.headers['Retry-After']).toBeDefined();
    expect(await storedMarker(refusedId)).toBeUndefined();
    expect(sent).toEqual([{ id: admittedId }]);
  });

  it('answers 429, not what its handler found', async () => {
    // Prepare
    const user = await newUser('limited');
    const at = minuteAhead(3);
    const { handler } = probeHandler(at);
    await useUpMinute(user.orgId, at);

    // Act
    const response = await call(handler, 'POST', '/probe/404', { token: user.token });

    // Assess
    expect(response.status).toBe(429);
  });

  it('creates no task and uses up no task id past the creation limit', async () => {
    // Prepare
    const user = await newUser('creator');
    const clock = fixedClock(minuteAhead(4));
    const tasks = tasksHandler({ ports: { clock } });
    const ids: number[] = [];
    for (let index = 0; index < TASK_CREATION_PER_MINUTE; index += 1) {
      const created = await call(tasks, 'POST', '/tasks', { token: user.token, body: { title: `Task ${index}` } });
      ids.push(created.body.data.id);
    }

    // Act
    const refused = await call(tasks, 'POST', '/tasks', { token: user.token, body: { title: 'One too many' } });
    clock.advance(60_000);
    const next = await call(tasks, 'POST', '/tasks', { token: user.token, body: { title: 'The next minute' } });
    const listed = await call(tasks, 'GET', '/tasks', { token: user.token, query: { q: 'many' } });

    // Assess
    expect(refused.status).toBe(429);
    expect(next.status).toBe(201);
    expect(next.body.data.id).toBe((ids.at(-1) as number) + 1);
    expect(listed.body.data).toEqual([]);
  });
});

describe('an API key’s usage record', () => {
  async function keyOf(user: TestUser) {
    const created = await call(apiKeys, 'POST', `/organizations/${user.orgId}/api-keys`, {
      token: user.token,
      body: { name: 'usage', scopes: ['write'] },
    });
    return { id: created.body.data.id as string, key: created.body.data.key as string };
  }

  it('holds the answer: the success status, a refusal by the limit, a 404', async () => {
    // Prepare
    const user = await newUser('keyed');
    const { id, key } = await keyOf(user);
    const at = minuteAhead(5);
    const { handler } = probeHandler(at);
    const markerId = 9000 + Math.floor(Math.random() * 1000);

    // Act
    await call(handler, 'POST', `/probe/${markerId}`, { token: key });
    await call(handler, 'POST', '/probe/404', { token: key });
    await useUpMinute(user.orgId, at);
    await call(handler, 'POST', `/probe/${markerId}`, { token: key });
    const usage = await call(apiKeys, 'GET', `/organizations/${user.orgId}/api-keys/${id}/usage`, {
      token: user.token,
    });

    // Assess: newest first (the same instant: ordered by status here).
    expect(usage.body.data.map((use: { status: number }) => use.status).sort()).toEqual([200, 404, 429]);
    expect(usage.body.meta.total).toBe(3);
  });
});

/** Stores the record `key` is found by under `other` too, as if `other` were that key. */
async function copyLookup(key: string, other: string) {
  const { Item } = await table.get({ Key: identityKeys.apiKeyHash(sha256(key)), ConsistentRead: true });
  if (!Item) throw new Error('no lookup record for the key');
  await table.put({ Item: { ...Item, ...identityKeys.apiKeyHash(sha256(other)) } });
}

describe('GET /tasks/{id}', () => {
  const calls: string[] = [];
  let counting = false;
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (counting) calls.push((context.commandName as string).replace('Command', ''));
      return next(args);
    },
    { step: 'initialize', name: 'countAdmissionCalls' },
  );
  async function counted<T>(work: () => Promise<T>): Promise<{ result: T; calls: string[] }> {
    calls.length = 0;
    counting = true;
    try {
      return { result: await work(), calls: [...calls].sort() };
    } finally {
      counting = false;
    }
  }

  it('reads the task with the credential: 2 calls with a token, 3 with an API key (its usage record too)', async () => {
    // Prepare
    const user = await newUser('reader');
    const tasks = tasksHandler();
    const created = await call(tasks, 'POST', '/tasks', { token: user.token, body: { title: 'Read me' } });
    const key = await call(apiKeys, 'POST', `/organizations/${user.orgId}/api-keys`, {
      token: user.token,
      body: { name: 'reader', scopes: ['read'] },
    });
    const path = `/tasks/${created.body.data.id}`;

    // Act
    const withToken = await counted(() => call(tasks, 'GET', path, { token: user.token }));
    const withKey = await counted(() => call(tasks, 'GET', path, { token: key.body.data.key }));

    // Assess
    expect(withToken.result.body.data.title).toBe('Read me');
    expect(withToken.calls).toEqual(['BatchGetItem', 'UpdateItem']);
    expect(withKey.result.body.data.title).toBe('Read me');
    expect(withKey.calls).toEqual(['BatchGetItem', 'BatchWriteItem', 'UpdateItem']);
  });

  it('reads the task after the record of a key made before keys named their organization: 4 calls', async () => {
    // Prepare: the same record found by a key of the older form (43 characters after the prefix).
    const user = await newUser('legacykey');
    const tasks = tasksHandler();
    const created = await call(tasks, 'POST', '/tasks', { token: user.token, body: { title: 'Old key' } });
    const key = await call(apiKeys, 'POST', `/organizations/${user.orgId}/api-keys`, {
      token: user.token,
      body: { name: 'older', scopes: ['read'] },
    });
    const legacy = `${API_KEY_PREFIX}${randomBase62(43)}`;
    await copyLookup(key.body.data.key, legacy);
    const path = `/tasks/${created.body.data.id}`;

    // Act
    const read = await counted(() => call(tasks, 'GET', path, { token: legacy }));

    // Assess
    expect(organizationHint(legacy)).toBeUndefined();
    expect(read.result.body.data.title).toBe('Old key');
    expect(read.calls).toEqual(['BatchGetItem', 'BatchGetItem', 'BatchWriteItem', 'UpdateItem']);
  });

  it('refuses a key whose record belongs to another organization than the one it names', async () => {
    // Prepare: a record of the owner's key, found by a key that names the stranger's organization.
    const owner = await newUser('hintowner');
    const stranger = await newUser('hintstranger');
    const tasks = tasksHandler();
    await call(tasks, 'POST', '/tasks', { token: owner.token, body: { title: 'Owner task' } });
    const created = await call(tasks, 'POST', '/tasks', { token: stranger.token, body: { title: 'Stranger task' } });
    const key = await call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
      token: owner.token,
      body: { name: 'hint', scopes: ['read'] },
    });
    const forged = newApiKey(stranger.orgId);
    await copyLookup(key.body.data.key, forged);

    // Act
    const read = await call(tasks, 'GET', `/tasks/${created.body.data.id}`, { token: forged });

    // Assess
    expect(organizationHint(forged)).toBe(stranger.orgId);
    expect(read.status).toBe(401);
    expect(JSON.stringify(read.body)).not.toContain('Owner task');
  });

  it('gives a caller nothing read ahead in an organization it is not a member of', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const tasks = tasksHandler();
    const created = await call(tasks, 'POST', '/tasks', { token: owner.token, body: { title: 'Private' } });
    const path = `/tasks/${created.body.data.id}`;

    // Act
    const asked = await call(tasks, 'GET', path, {
      token: stranger.token,
      headers: { 'x-organization-id': owner.orgId },
    });
    const own = await call(tasks, 'GET', path, { token: stranger.token });

    // Assess
    expect(asked.status).toBe(403);
    expect(JSON.stringify(asked.body)).not.toContain('Private');
    expect(own.status).toBe(404);
  });
});
