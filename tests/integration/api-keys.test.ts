import { beforeAll, describe, expect, it } from 'vitest';
import { handler as apiKeys, bindings } from '#functions/http/api-keys';
import { handler as auth } from '#functions/http/auth';
import { sha256 } from '#lib/crypto/secrets';
import { groupHandler } from '#lib/http/group-handler';
import { fixedClock } from '#lib/kernel/clock';
import { call, joinOrganization, newUser, type TestUser } from '#tests/support/identity';

const HOUR = 3_600_000;

let instanceAdmin: TestUser;
let owner: TestUser;

beforeAll(async () => {
  // The first user of this file's table is the instance admin.
  instanceAdmin = await newUser('admin');
  owner = await newUser('owner');
});

const keysOf = (orgId: string) => `/organizations/${orgId}/api-keys`;

/** Creates a key in the owner's organization and answers its record with the raw key. */
async function createKey(body: Record<string, unknown> = {}, as: TestUser = owner, handler = apiKeys) {
  const response = await call(handler, 'POST', keysOf(as.orgId), {
    token: as.token,
    body: { name: 'ci', ...body },
  });
  if (response.status !== 201) throw new Error(`create failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: string; key: string; masked_key: string; [field: string]: unknown };
}

const statusOfMe = async (key: string) => (await call(auth, 'GET', '/auth/me', { token: key })).status;

describe('POST /organizations/{orgId}/api-keys', () => {
  it('creates a key, shows it raw once, and the key authenticates as the organization', async () => {
    const expiresAt = new Date(Date.now() + 48 * HOUR).toISOString();

    const response = await call(apiKeys, 'POST', keysOf(owner.orgId), {
      token: owner.token,
      body: { name: 'deploy bot', description: 'CI deploys', expires_at: expiresAt },
    });

    expect(response.status).toBe(201);
    const key = response.body.data.key as string;
    expect(key).toMatch(/^osk_live_[0-9A-Za-z]{59}$/);
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(/^key_[0-9A-Za-z]+$/),
        name: 'deploy bot',
        description: 'CI deploys',
        scopes: ['read'],
        active: true,
        masked_key: `osk_live_…${key.slice(-4)}`,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        expires_at: expiresAt,
        revoked_at: null,
        rotated_at: null,
        created_by: owner.id,
        grace_until: null,
        key,
      },
    });
    const me = await call(auth, 'GET', '/auth/me', { token: key });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      id: null,
      organization: { id: owner.orgId, role: null },
      auth: { method: 'api_key', capability: 'read', scopes: ['read'], key_id: response.body.data.id },
    });
  });

  it('keeps scopes in canonical order without duplicates', async () => {
    const created = await createKey({ scopes: ['write', 'read', 'write'] });

    expect(created.scopes).toEqual(['read', 'write']);
  });

  it.each([
    ['a missing name', {}, 'body.name'],
    ['an empty name', { name: '  ' }, 'body.name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'body.name'],
    ['an unknown scope', { name: 'k', scopes: ['superuser'] }, 'body.scopes[0]'],
    ['no scopes', { name: 'k', scopes: [] }, 'body.scopes'],
    ['an expiry that is not a datetime', { name: 'k', expires_at: 'tomorrow' }, 'body.expires_at'],
    ['an expiry in the past', { name: 'k', expires_at: '2020-01-01T00:00:00Z' }, 'body.expires_at'],
  ])('answers 400 for %s', async (_case, body, path) => {
    const response = await call(apiKeys, 'POST', keysOf(owner.orgId), { token: owner.token, body });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(response.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
  });

  it('answers 401 without a credential', async () => {
    const response = await call(apiKeys, 'POST', keysOf(owner.orgId), { body: { name: 'k' } });

    expect(response.status).toBe(401);
  });
});

describe('scopes', () => {
  it('lets a read key read but answers 403 when it writes or manages keys', async () => {
    const { key } = await createKey({ scopes: ['read'] });

    const me = await statusOfMe(key);
    const create = await call(apiKeys, 'POST', keysOf(owner.orgId), { token: key, body: { name: 'x' } });
    const list = await call(apiKeys, 'GET', keysOf(owner.orgId), { token: key });

    expect(me).toBe(200);
    expect(create.status).toBe(403);
    expect(create.body.error.code).toBe('FORBIDDEN');
    expect(list.status).toBe(403);
  });

  it('answers 403 to a write key on key management', async () => {
    const { key } = await createKey({ scopes: ['write'] });

    const create = await call(apiKeys, 'POST', keysOf(owner.orgId), { token: key, body: { name: 'x' } });

    expect(create.status).toBe(403);
  });

  it('lets an admin key manage the keys of its own organization', async () => {
    const { key } = await createKey({ scopes: ['admin'] });

    const create = await call(apiKeys, 'POST', keysOf(owner.orgId), { token: key, body: { name: 'child' } });
    const list = await call(apiKeys, 'GET', keysOf(owner.orgId), { token: key });

    expect(create.status).toBe(201);
    expect(create.body.data.created_by).toBeNull();
    expect(list.status).toBe(200);
  });
});

describe('who may manage keys', () => {
  it('answers 404 to a user of another organization for every key route', async () => {
    const outsider = await newUser('outsider');
    const { id } = await createKey();
    const one = `${keysOf(owner.orgId)}/${id}`;

    const statuses = [
      (await call(apiKeys, 'GET', keysOf(owner.orgId), { token: outsider.token })).status,
      (await call(apiKeys, 'POST', keysOf(owner.orgId), { token: outsider.token, body: { name: 'x' } })).status,
      (await call(apiKeys, 'GET', one, { token: outsider.token })).status,
      (await call(apiKeys, 'PATCH', one, { token: outsider.token, body: { active: false } })).status,
      (await call(apiKeys, 'DELETE', one, { token: outsider.token })).status,
      (await call(apiKeys, 'POST', `${one}/revoke`, { token: outsider.token })).status,
      (await call(apiKeys, 'POST', `${one}/rotate`, { token: outsider.token })).status,
      (await call(apiKeys, 'POST', `${one}/roll`, { token: outsider.token })).status,
      (await call(apiKeys, 'GET', `${one}/usage`, { token: outsider.token })).status,
    ];

    expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 404, 404, 404]);
    const still = await call(apiKeys, 'GET', one, { token: owner.token });
    expect(still.body.data).toMatchObject({ active: true, revoked_at: null });
  });

  it('answers 404 to an admin key of another organization and for a key id of another organization', async () => {
    const outsider = await newUser('outsider');
    const foreignAdminKey = (await createKey({ scopes: ['admin'] }, outsider)).key;
    const { id } = await createKey();

    const byForeignKey = await call(apiKeys, 'GET', keysOf(owner.orgId), { token: foreignAdminKey });
    const underOwnOrg = await call(apiKeys, 'GET', `${keysOf(outsider.orgId)}/${id}`, {
      token: outsider.token,
    });

    expect(byForeignKey.status).toBe(404);
    expect(underOwnOrg.status).toBe(404);
  });

  it('answers 403 to members and viewers of the organization', async () => {
    const member = await newUser('member');
    const viewer = await newUser('viewer');
    await joinOrganization(member, owner.orgId, 'member');
    await joinOrganization(viewer, owner.orgId, 'viewer');

    const memberList = await call(apiKeys, 'GET', keysOf(owner.orgId), { token: member.token });
    const memberCreate = await call(apiKeys, 'POST', keysOf(owner.orgId), {
      token: member.token,
      body: { name: 'x' },
    });
    const viewerList = await call(apiKeys, 'GET', keysOf(owner.orgId), { token: viewer.token });

    expect([memberList.status, memberCreate.status, viewerList.status]).toEqual([403, 403, 403]);
  });

  it('lets an admin of the organization manage its keys', async () => {
    const orgAdmin = await newUser('orgadmin');
    await joinOrganization(orgAdmin, owner.orgId, 'admin');

    const response = await call(apiKeys, 'POST', keysOf(owner.orgId), {
      token: orgAdmin.token,
      body: { name: 'by org admin' },
    });

    expect(response.status).toBe(201);
    expect(response.body.data.created_by).toBe(orgAdmin.id);
  });

  it('lets an instance admin manage the keys of any organization', async () => {
    const { id } = await createKey();

    const response = await call(apiKeys, 'GET', `${keysOf(owner.orgId)}/${id}`, {
      token: instanceAdmin.token,
    });

    expect(response.status).toBe(200);
    expect(response.body.data.id).toBe(id);
  });

  it('answers 404 for an unknown organization and an unknown key, and 400 for a malformed id', async () => {
    const unknownOrg = await call(apiKeys, 'GET', keysOf('org_doesnotexist'), { token: instanceAdmin.token });
    const unknownKey = await call(apiKeys, 'GET', `${keysOf(owner.orgId)}/key_doesnotexist`, {
      token: owner.token,
    });
    const malformed = await call(apiKeys, 'GET', `${keysOf(owner.orgId)}/key%20nope`, { token: owner.token });

    expect(unknownOrg.status).toBe(404);
    expect(unknownKey.status).toBe(404);
    expect(unknownKey.body.error).toEqual({ code: 'NOT_FOUND', message: 'API key not found', details: [] });
    expect(malformed.status).toBe(400);
  });
});

describe('GET /organizations/{orgId}/api-keys and /{keyId}', () => {
  it('lists keys masked, oldest first, with exact paging meta', async () => {
    const lister = await newUser('lister');
    const clock = fixedClock(new Date());
    const keys = groupHandler('api-keys', bindings, { ports: { clock } });
    const { key: _raw, ...first } = await createKey({ name: 'first' }, lister, keys);
    clock.advance(1);
    await createKey({ name: 'second' }, lister, keys);
    clock.advance(1);
    await createKey({ name: 'third' }, lister, keys);

    const page = await call(apiKeys, 'GET', keysOf(lister.orgId), {
      token: lister.token,
      query: { limit: '2', offset: '0' },
    });
    const rest = await call(apiKeys, 'GET', keysOf(lister.orgId), {
      token: lister.token,
      query: { limit: '2', offset: '2' },
    });

    expect(page.status).toBe(200);
    expect(page.body.meta).toEqual({ total: 3, limit: 2, offset: 0 });
    expect(page.body.data.map((item: { name: string }) => item.name)).toEqual(['first', 'second']);
    expect(page.body.data[0]).toEqual(first);
    expect(rest.body.data.map((item: { name: string }) => item.name)).toEqual(['third']);
  });

  it('never shows the raw key, its hash or storage keys in lists and reads', async () => {
    const { id, key } = await createKey();

    const list = await call(apiKeys, 'GET', keysOf(owner.orgId), {
      token: owner.token,
      query: { limit: '200' },
    });
    const one = await call(apiKeys, 'GET', `${keysOf(owner.orgId)}/${id}`, { token: owner.token });

    for (const body of [JSON.stringify(list.body), JSON.stringify(one.body)]) {
      expect(body).not.toContain(key);
      expect(body).not.toContain(sha256(key));
      expect(body).not.toMatch(/"pk"|"sk"|key_hash/);
    }
    expect(one.body.data).not.toHaveProperty('key');
    expect(one.body.data.masked_key).toBe(`osk_live_…${key.slice(-4)}`);
  });

  it('answers 400 for a negative limit', async () => {
    const response = await call(apiKeys, 'GET', keysOf(owner.orgId), {
      token: owner.token,
      query: { limit: '-1' },
    });

    expect(response.status).toBe(400);
  });
});

describe('PATCH /organizations/{orgId}/api-keys/{keyId}', () => {
  it('renames and rescopes a key, and the new scopes apply from the next request', async () => {
    const { id, key } = await createKey({ scopes: ['read'] });

    const response = await call(apiKeys, 'PATCH', `${keysOf(owner.orgId)}/${id}`, {
      token: owner.token,
      body: { name: 'renamed', description: 'now writes', scopes: ['write'] },
    });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id,
      name: 'renamed',
      description: 'now writes',
      scopes: ['write'],
    });
    const me = await call(auth, 'GET', '/auth/me', { token: key });
    expect(me.body.data.auth).toMatchObject({ capability: 'write', scopes: ['write'] });
  });

  it('deactivates a key with active:false and restores it with active:true', async () => {
    const { id, key } = await createKey();
    const one = `${keysOf(owner.orgId)}/${id}`;

    const off = await call(apiKeys, 'PATCH', one, { token: owner.token, body: { active: false } });
    const whileOff = await statusOfMe(key);
    const on = await call(apiKeys, 'PATCH', one, { token: owner.token, body: { active: true } });
    const whileOn = await statusOfMe(key);

    expect(off.body.data.active).toBe(false);
    expect(whileOff).toBe(401);
    expect(on.body.data.active).toBe(true);
    expect(whileOn).toBe(200);
  });

  it('answers 400 for an empty body and for a non-boolean active', async () => {
    const { id } = await createKey();

    const empty = await call(apiKeys, 'PATCH', `${keysOf(owner.orgId)}/${id}`, {
      token: owner.token,
      body: {},
    });
    const wrong = await call(apiKeys, 'PATCH', `${keysOf(owner.orgId)}/${id}`, {
      token: owner.token,
      body: { active: 'yes' },
    });

    expect(empty.status).toBe(400);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual([expect.objectContaining({ path: 'body.active' })]);
  });
});

describe('POST /organizations/{orgId}/api-keys/{keyId}/revoke', () => {
  it('makes the key fail at the next request and can never be undone', async () => {
    const { id, key } = await createKey();
    const one = `${keysOf(owner.orgId)}/${id}`;
    const before = await statusOfMe(key);

    const revoked = await call(apiKeys, 'POST', `${one}/revoke`, { token: owner.token });
    const after = await statusOfMe(key);
    const reactivate = await call(apiKeys, 'PATCH', one, { token: owner.token, body: { active: true } });
    const rotate = await call(apiKeys, 'POST', `${one}/rotate`, { token: owner.token });
    const roll = await call(apiKeys, 'POST', `${one}/roll`, { token: owner.token });
    const again = await call(apiKeys, 'POST', `${one}/revoke`, { token: owner.token });

    expect(before).toBe(200);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ id, active: false, revoked_at: expect.any(String) });
    expect(after).toBe(401);
    expect(reactivate.status).toBe(409);
    expect(reactivate.body.error.code).toBe('CONFLICT');
    expect([rotate.status, roll.status]).toEqual([409, 409]);
    expect(again.status).toBe(200);
    expect(again.body.data.revoked_at).toBe(revoked.body.data.revoked_at);
    expect(await statusOfMe(key)).toBe(401);
  });
});

describe('POST /organizations/{orgId}/api-keys/{keyId}/roll', () => {
  it('returns a new raw key once and the old key fails at once', async () => {
    const { id, key: oldKey } = await createKey();

    const rolled = await call(apiKeys, 'POST', `${keysOf(owner.orgId)}/${id}/roll`, { token: owner.token });
    const newKey = rolled.body.data.key as string;

    expect(rolled.status).toBe(200);
    expect(newKey).toMatch(/^osk_live_/);
    expect(newKey).not.toBe(oldKey);
    expect(rolled.body.data).toMatchObject({
      id,
      masked_key: `osk_live_…${newKey.slice(-4)}`,
      rotated_at: expect.any(String),
      grace_until: null,
    });
    expect(await statusOfMe(oldKey)).toBe(401);
    expect(await statusOfMe(newKey)).toBe(200);
    const read = await call(apiKeys, 'GET', `${keysOf(owner.orgId)}/${id}`, { token: owner.token });
    expect(read.body.data.masked_key).toBe(`osk_live_…${newKey.slice(-4)}`);
  });

  it('answers 409 for an inactive key', async () => {
    const { id } = await createKey();
    const one = `${keysOf(owner.orgId)}/${id}`;
    await call(apiKeys, 'PATCH', one, { token: owner.token, body: { active: false } });

    const rolled = await call(apiKeys, 'POST', `${one}/roll`, { token: owner.token });

    expect(rolled.status).toBe(409);
  });
});

describe('POST /organizations/{orgId}/api-keys/{keyId}/rotate (with a clock the test moves)', () => {
  it('keeps the old key working until the grace ends, then only the new key works', async () => {
    const clock = fixedClock(new Date());
    const keys = groupHandler('api-keys', bindings, { ports: { clock } });
    const start = clock.now().getTime();
    const { id, key: oldKey } = await createKey({ scopes: ['admin'] }, owner, keys);

    const rotated = await call(keys, 'POST', `${keysOf(owner.orgId)}/${id}/rotate`, {
      token: owner.token,
      body: { grace_hours: 2 },
    });
    const newKey = rotated.body.data.key as string;
    clock.set(new Date(start + 2 * HOUR - 1000));
    const oldBeforeEnd = await call(keys, 'GET', keysOf(owner.orgId), { token: oldKey });
    clock.set(new Date(start + 2 * HOUR));
    const oldAtEnd = await call(keys, 'GET', keysOf(owner.orgId), { token: oldKey });
    const newAtEnd = await call(keys, 'GET', keysOf(owner.orgId), { token: newKey });

    expect(rotated.status).toBe(200);
    expect(rotated.body.data).toMatchObject({
      id,
      masked_key: `osk_live_…${newKey.slice(-4)}`,
      rotated_at: new Date(start).toISOString(),
      grace_until: new Date(start + 2 * HOUR).toISOString(),
    });
    expect(newKey).not.toBe(oldKey);
    expect(oldBeforeEnd.status).toBe(200);
    expect(oldAtEnd.status).toBe(401);
    expect(newAtEnd.status).toBe(200);
  });

  it('gives a 24-hour grace when no grace_hours is given', async () => {
    const clock = fixedClock(new Date());
    const keys = groupHandler('api-keys', bindings, { ports: { clock } });
    const { id } = await createKey({}, owner, keys);

    const rotated = await call(keys, 'POST', `${keysOf(owner.orgId)}/${id}/rotate`, { token: owner.token });

    expect(rotated.status).toBe(200);
    expect(rotated.body.data.grace_until).toBe(new Date(clock.now().getTime() + 24 * HOUR).toISOString());
  });

  it('ends the grace of the older key when a key is rotated again', async () => {
    const { id, key: first } = await createKey();
    const one = `${keysOf(owner.orgId)}/${id}`;

    const second = (await call(apiKeys, 'POST', `${one}/rotate`, { token: owner.token })).body.data.key;
    const third = (await call(apiKeys, 'POST', `${one}/rotate`, { token: owner.token })).body.data.key;

    expect(await statusOfMe(first)).toBe(401);
    expect(await statusOfMe(second)).toBe(200);
    expect(await statusOfMe(third)).toBe(200);
  });

  it('applies deactivation and revocation to the old key during its grace', async () => {
    const { id, key: oldKey } = await createKey();
    const one = `${keysOf(owner.orgId)}/${id}`;
    const newKey = (await call(apiKeys, 'POST', `${one}/rotate`, { token: owner.token })).body.data.key;

    await call(apiKeys, 'PATCH', one, { token: owner.token, body: { active: false } });
    const whileOff = [await statusOfMe(oldKey), await statusOfMe(newKey)];
    await call(apiKeys, 'PATCH', one, { token: owner.token, body: { active: true } });
    const whileOn = [await statusOfMe(oldKey), await statusOfMe(newKey)];
    await call(apiKeys, 'POST', `${one}/revoke`, { token: owner.token });
    const revoked = [await statusOfMe(oldKey), await statusOfMe(newKey)];

    expect(whileOff).toEqual([401, 401]);
    expect(whileOn).toEqual([200, 200]);
    expect(revoked).toEqual([401, 401]);
  });

  it.each([
    ['above 720', { grace_hours: 721 }],
    ['negative', { grace_hours: -1 }],
    ['not an integer', { grace_hours: 1.5 }],
    ['a string', { grace_hours: '24' }],
  ])('answers 400 for grace_hours %s', async (_case, body) => {
    const { id } = await createKey();

    const response = await call(apiKeys, 'POST', `${keysOf(owner.orgId)}/${id}/rotate`, {
      token: owner.token,
      body,
    });

    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ path: 'body.grace_hours' })]);
  });
});

describe('expiry', () => {
  it('stops a key at its expires_at and refuses to rotate it afterwards', async () => {
    const clock = fixedClock(new Date());
    const keys = groupHandler('api-keys', bindings, { ports: { clock } });
    const start = clock.now().getTime();
    const { id, key } = await createKey(
      { scopes: ['admin'], expires_at: new Date(start + HOUR).toISOString() },
      owner,
      keys,
    );
    // The owner's access token lives one hour too, so a key without expiry acts for the owner later on.
    const manager = await createKey({ scopes: ['admin'] }, owner, keys);

    clock.set(new Date(start + HOUR - 1000));
    const beforeExpiry = await call(keys, 'GET', keysOf(owner.orgId), { token: key });
    clock.set(new Date(start + HOUR));
    const atExpiry = await call(keys, 'GET', keysOf(owner.orgId), { token: key });
    const rotate = await call(keys, 'POST', `${keysOf(owner.orgId)}/${id}/rotate`, { token: manager.key });

    expect(beforeExpiry.status).toBe(200);
    expect(atExpiry.status).toBe(401);
    expect(rotate.status).toBe(409);
    expect(rotate.body.error.message).toBe('The API key has expired; create a new key');
  });
});

describe('DELETE /organizations/{orgId}/api-keys/{keyId}', () => {
  it('soft-deletes a key: it fails at once, leaves the list and answers 404 afterwards', async () => {
    const { id, key } = await createKey();
    const one = `${keysOf(owner.orgId)}/${id}`;

    const response = await call(apiKeys, 'DELETE', one, { token: owner.token });
    const list = await call(apiKeys, 'GET', keysOf(owner.orgId), {
      token: owner.token,
      query: { limit: '200' },
    });
    const read = await call(apiKeys, 'GET', one, { token: owner.token });
    const again = await call(apiKeys, 'DELETE', one, { token: owner.token });
    const reactivate = await call(apiKeys, 'PATCH', one, { token: owner.token, body: { active: true } });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { id, deleted_at: expect.any(String) }, meta: { deleted: true } });
    expect(await statusOfMe(key)).toBe(401);
    expect(list.body.data.map((item: { id: string }) => item.id)).not.toContain(id);
    expect([read.status, again.status, reactivate.status]).toEqual([404, 404, 404]);
  });

  it('kills a rotated key’s predecessor too', async () => {
    const { id, key: oldKey } = await createKey();
    const one = `${keysOf(owner.orgId)}/${id}`;
    const newKey = (await call(apiKeys, 'POST', `${one}/rotate`, { token: owner.token })).body.data.key;

    await call(apiKeys, 'DELETE', one, { token: owner.token });

    expect([await statusOfMe(oldKey), await statusOfMe(newKey)]).toEqual([401, 401]);
  });
});

describe('GET /organizations/{orgId}/api-keys/{keyId}/usage', () => {
  it('lists the requests made with the key, newest first, with route and status', async () => {
    const clock = fixedClock(new Date());
    const keys = groupHandler('api-keys', bindings, { ports: { clock } });
    const { id, key } = await createKey({ scopes: ['admin'] }, owner, keys);
    const other = await createKey({ scopes: ['admin'] }, owner, keys);

    clock.advance(1000);
    await call(keys, 'GET', keysOf(owner.orgId), { token: key });
    clock.advance(1000);
    await call(keys, 'GET', `${keysOf(owner.orgId)}/key_doesnotexist`, { token: key });
    clock.advance(1000);
    await call(keys, 'POST', keysOf(owner.orgId), { token: key, body: {} });
    await call(keys, 'GET', keysOf(owner.orgId), { token: other.key });
    const usage = await call(apiKeys, 'GET', `${keysOf(owner.orgId)}/${id}/usage`, { token: owner.token });
    const paged = await call(apiKeys, 'GET', `${keysOf(owner.orgId)}/${id}/usage`, {
      token: owner.token,
      query: { limit: '1', offset: '1' },
    });

    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({
      data: [
        { method: 'POST', route: '/organizations/{orgId}/api-keys', status: 400, at: expect.any(String) },
        {
          method: 'GET',
          route: '/organizations/{orgId}/api-keys/{keyId}',
          status: 404,
          at: expect.any(String),
        },
        { method: 'GET', route: '/organizations/{orgId}/api-keys', status: 200, at: expect.any(String) },
      ],
      meta: { total: 3, limit: 50, offset: 0 },
    });
    expect(usage.body.data[0].at).toBe(clock.now().toISOString());
    expect(paged.body.data).toEqual([usage.body.data[1]]);
    expect(paged.body.meta).toEqual({ total: 3, limit: 1, offset: 1 });
  });

  it('answers 404 for an unknown key', async () => {
    const response = await call(apiKeys, 'GET', `${keysOf(owner.orgId)}/key_doesnotexist/usage`, {
      token: owner.token,
    });

    expect(response.status).toBe(404);
  });
});
