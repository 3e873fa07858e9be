import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { organizationRoutes, handler as organizations } from '#functions/http/organizations';
import { email } from '#lib/app/email';
import { wirePorts } from '#lib/app/ports';
import { sha256 } from '#lib/crypto/secrets';
import { db, TABLE } from '#lib/db/client';
import { groupHandler } from '#lib/http/group-handler';
import { newApiKey } from '#lib/identity/api-key-format';
import { bearerAuthenticator } from '#lib/identity/authenticator';
import { identityKeys } from '#lib/identity/keys';
import { fixedClock } from '#lib/kernel/clock';
import { type Authenticator, requestContext } from '#lib/kernel/context';
import { type CallOptions, call, newUser, outboxFor, type TestUser } from '#tests/support/identity';

const DAY_MS = 86_400_000;

const api = (method: string, path: string, options: CallOptions = {}) => call(organizations, method, path, options);

/** Credentials checked at real time, whatever clock the handler's domain runs on. */
const realTime = wirePorts();
const authenticatorAtRealTime: Authenticator = {
  authenticate: (ctx, credential) =>
    bearerAuthenticator.authenticate(requestContext({ traceId: ctx.traceId, ports: realTime }), credential),
};

/** A handler whose domain clock runs `days` ahead, while credentials are still checked at real time. */
const handlerDaysAhead = (days: number) =>
  groupHandler('organizations', organizationRoutes, {
    ports: { clock: fixedClock(new Date(Date.now() + days * DAY_MS)), email },
    authenticator: authenticatorAtRealTime,
  });

let unique = 0;
/** A name no other test uses, so that generated slugs do not collide across tests. */
const uniqueName = (prefix: string) => {
  unique += 1;
  return `${prefix} ${unique}${Math.random().toString(36).slice(2, 7)}`;
};

/** The token of the latest invite emailed to an address. */
function invitedToken(address: string): string {
  const latest = outboxFor(address).at(-1);
  const match = /\/organizations\/invites\/([^/\s]+)\/accept/.exec(latest?.text ?? '');
  if (!match) throw new Error(`no invite email for ${address}`);
  return decodeURIComponent(match[1] as string);
}

/** Creates a (non-personal) organization owned by `owner`. */
async function orgOf(owner: TestUser, name = uniqueName('Team')): Promise<string> {
  const response = await api('POST', '/organizations', { token: owner.token, body: { name } });
  if (response.status !== 201) throw new Error(`create failed: ${JSON.stringify(response.body)}`);
  return response.body.data.id;
}

/** Adds `user` to an organization with a role, as its owner. */
async function addAs(owner: TestUser, orgId: string, user: TestUser, role: string): Promise<void> {
  const response = await api('POST', `/organizations/${orgId}/members`, {
    token: owner.token,
    body: { user_id: String(user.id), role },
  });
  if (response.status !== 201) throw new Error(`add failed: ${JSON.stringify(response.body)}`);
}

/** Stores an API key lookup item for an organization, as the api-keys module would. */
async function apiKeyFor(orgId: string, scopes: string[]): Promise<string> {
  const key = newApiKey(orgId);
  await db.send(
    new PutCommand({
      TableName: TABLE,
      Item: {
        ...identityKeys.apiKeyHash(sha256(key)),
        org_id: orgId,
        key_id: `key_${Math.random().toString(36).slice(2, 10)}`,
        scopes,
        active: true,
      },
    }),
  );
  return key;
}

const memberCountOf = async (owner: TestUser, orgId: string): Promise<number> =>
  (await api('GET', `/organizations/${orgId}`, { token: owner.token })).body.data.member_count;

/** Storage internals and secrets that must never appear in a response body. */
const expectNoInternals = (body: unknown) => {
  const text = JSON.stringify(body);
  expect(text).not.toMatch(/"(pk|sk|gsi1pk|gsi1sk|gsi2pk|gsi2sk)"/);
  expect(text).not.toMatch(/hash|token/i);
};

let instanceAdmin: TestUser;

beforeAll(async () => {
  // The first user of this file's table is the instance admin.
  instanceAdmin = await newUser('root');
});

describe('POST /organizations', () => {
  it('creates an organization owned by the caller, with a slug generated from the name', async () => {
    // Prepare
    const owner = await newUser('owner');
    const name = uniqueName('Acme Robotics');

    // Act
    const response = await api('POST', '/organizations', { token: owner.token, body: { name } });

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(/^org_/),
        name,
        slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
        avatar_url: null,
        owner_id: owner.id,
        tier: 'free',
        member_count: 1,
        personal: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    expectNoInternals(response.body);
    const members = await api('GET', `/organizations/${response.body.data.id}/members`, {
      token: owner.token,
    });
    expect(members.body.data).toEqual([
      {
        user_id: owner.id,
        username: owner.username,
        email: owner.email,
        role: 'owner',
        joined_at: expect.any(String),
      },
    ]);
  });

  it('suffixes a generated slug with -2 and -3 when the name’s slug is taken', async () => {
    // Prepare
    const owner = await newUser('owner');
    const name = uniqueName('Same Name');

    // Act
    const slugs = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await api('POST', '/organizations', { token: owner.token, body: { name } });
      expect(response.status).toBe(201);
      slugs.push(response.body.data.slug);
    }

    // Assess
    const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    expect(slugs).toEqual([base, `${base}-2`, `${base}-3`]);
  });

  it('answers 409 when an explicit slug exists, case-insensitively', async () => {
    // Prepare
    const owner = await newUser('owner');
    const slug = `taken-${Math.random().toString(36).slice(2, 8)}`;
    const first = await api('POST', '/organizations', { token: owner.token, body: { name: 'One', slug } });

    // Act
    const second = await api('POST', '/organizations', {
      token: owner.token,
      body: { name: 'Two', slug: slug.toUpperCase() },
    });

    // Assess
    expect(first.status).toBe(201);
    expect(first.body.data.slug).toBe(slug);
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'CONFLICT', details: [{ path: 'body.slug' }] });
  });

  it('answers 400 for a missing name or a malformed slug, and 401 without a credential', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const noName = await api('POST', '/organizations', { token: owner.token, body: { slug: 'fine' } });
    const badSlug = await api('POST', '/organizations', {
      token: owner.token,
      body: { name: 'Fine', slug: 'not a slug!' },
    });
    const anonymous = await api('POST', '/organizations', { body: { name: 'Fine' } });

    // Assess
    expect(noName.status).toBe(400);
    expect(noName.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.name' }] });
    expect(badSlug.status).toBe(400);
    expect(badSlug.body.error.details).toEqual([{ path: 'body.slug', message: expect.any(String) }]);
    expect(anonymous.status).toBe(401);
  });
});

describe('GET /organizations', () => {
  it('lists only the caller’s organizations, oldest first, with member counts and paging', async () => {
    // Prepare
    const owner = await newUser('owner');
    const other = await newUser('other');
    const first = await orgOf(owner);
    const second = await orgOf(owner);
    await orgOf(other);
    await addAs(owner, second, other, 'member');

    // Act
    const firstPage = await api('GET', '/organizations', { token: owner.token, query: { limit: '2' } });
    const secondPage = await api('GET', '/organizations', {
      token: owner.token,
      query: { limit: '2', offset: '2' },
    });

    // Assess
    expect(firstPage.status).toBe(200);
    expect(firstPage.body.meta).toEqual({ total: 3, limit: 2, offset: 0 });
    expect(firstPage.body.data.map((org: { id: string }) => org.id)).toEqual([owner.orgId, first]);
    expect(firstPage.body.data[0]).toMatchObject({ personal: true, member_count: 1 });
    expect(secondPage.body.meta).toEqual({ total: 3, limit: 2, offset: 2 });
    expect(secondPage.body.data).toEqual([expect.objectContaining({ id: second, member_count: 2 })]);
    expectNoInternals([firstPage.body, secondPage.body]);
  });

  it('shows an instance admin only the organizations they belong to', async () => {
    // Prepare
    const stranger = await newUser('stranger');
    const strangersOrg = await orgOf(stranger);

    // Act
    const response = await api('GET', '/organizations', { token: instanceAdmin.token });

    // Assess
    expect(response.status).toBe(200);
    const ids = response.body.data.map((org: { id: string }) => org.id);
    expect(ids).toContain(instanceAdmin.orgId);
    expect(ids).not.toContain(strangersOrg);
    expect(ids).not.toContain(stranger.orgId);
  });

  it('answers 400 for a negative or non-integer limit', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const negative = await api('GET', '/organizations', { token: owner.token, query: { limit: '-1' } });
    const fraction = await api('GET', '/organizations', { token: owner.token, query: { offset: '1.5' } });

    // Assess
    expect(negative.status).toBe(400);
    expect(negative.body.error.details).toEqual([{ path: 'query.limit', message: expect.any(String) }]);
    expect(fraction.status).toBe(400);
  });
});

describe('GET /organizations/{id}', () => {
  it('answers a member with the organization and its member count', async () => {
    // Prepare
    const owner = await newUser('owner');
    const viewer = await newUser('viewer');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, viewer, 'viewer');

    // Act
    const response = await api('GET', `/organizations/${orgId}`, { token: viewer.token });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: orgId, owner_id: owner.id, member_count: 2 });
    expectNoInternals(response.body);
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const unknown = await api('GET', '/organizations/org_doesnotexist', { token: owner.token });
    const malformed = await api('GET', `/organizations/${encodeURIComponent('bad#id')}`, {
      token: owner.token,
    });

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect(malformed.status).toBe(400);
  });

  it('lets an instance admin read an organization they do not belong to', async () => {
    // Prepare
    const owner = await newUser('owner');
    const orgId = await orgOf(owner);

    // Act
    const response = await api('GET', `/organizations/${orgId}`, { token: instanceAdmin.token });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.id).toBe(orgId);
  });
});

describe('PATCH /organizations/{id}', () => {
  it('lets an admin rename and re-slug the organization and frees the old slug', async () => {
    // Prepare
    const owner = await newUser('owner');
    const admin = await newUser('admin');
    const oldSlug = `old-${Math.random().toString(36).slice(2, 8)}`;
    const newSlug = `new-${Math.random().toString(36).slice(2, 8)}`;
    const created = await api('POST', '/organizations', {
      token: owner.token,
      body: { name: 'Old', slug: oldSlug },
    });
    const orgId = created.body.data.id;
    await addAs(owner, orgId, admin, 'admin');

    // Act
    const response = await api('PATCH', `/organizations/${orgId}`, {
      token: admin.token,
      body: { name: 'New name', slug: newSlug, avatar_url: 'https://example.com/logo.png' },
    });
    const reuse = await api('POST', '/organizations', {
      token: owner.token,
      body: { name: 'Again', slug: oldSlug },
    });
    const clash = await api('POST', '/organizations', {
      token: owner.token,
      body: { name: 'Clash', slug: newSlug },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id: orgId,
      name: 'New name',
      slug: newSlug,
      avatar_url: 'https://example.com/logo.png',
      member_count: 2,
    });
    expect((await api('GET', `/organizations/${orgId}`, { token: owner.token })).body.data).toEqual(response.body.data);
    expect(reuse.status).toBe(201);
    expect(clash.status).toBe(409);
  });

  it('answers 409 when the new slug belongs to another organization', async () => {
    // Prepare
    const owner = await newUser('owner');
    const taken = `taken-${Math.random().toString(36).slice(2, 8)}`;
    await api('POST', '/organizations', { token: owner.token, body: { name: 'Holder', slug: taken } });
    const orgId = await orgOf(owner);

    // Act
    const response = await api('PATCH', `/organizations/${orgId}`, {
      token: owner.token,
      body: { slug: taken },
    });

    // Assess
    expect(response.status).toBe(409);
    expect(response.body.error).toMatchObject({ code: 'CONFLICT', details: [{ path: 'body.slug' }] });
  });

  it('answers 403 to members and viewers and 404 to non-members', async () => {
    // Prepare
    const owner = await newUser('owner');
    const member = await newUser('member');
    const viewer = await newUser('viewer');
    const outsider = await newUser('outsider');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, member, 'member');
    await addAs(owner, orgId, viewer, 'viewer');

    // Act
    const asMember = await api('PATCH', `/organizations/${orgId}`, {
      token: member.token,
      body: { name: 'X' },
    });
    const asViewer = await api('PATCH', `/organizations/${orgId}`, {
      token: viewer.token,
      body: { name: 'X' },
    });
    const asOutsider = await api('PATCH', `/organizations/${orgId}`, {
      token: outsider.token,
      body: { name: 'X' },
    });

    // Assess
    expect(asMember.status).toBe(403);
    expect(asMember.body.error.code).toBe('FORBIDDEN');
    expect(asViewer.status).toBe(403);
    expect(asOutsider.status).toBe(404);
  });

  it('answers 400 for an empty body or an avatar_url that is not an http(s) URL', async () => {
    // Prepare
    const owner = await newUser('owner');
    const orgId = await orgOf(owner);

    // Act
    const empty = await api('PATCH', `/organizations/${orgId}`, { token: owner.token, body: {} });
    const script = await api('PATCH', `/organizations/${orgId}`, {
      token: owner.token,
      body: { avatar_url: 'javascript:alert(1)' },
    });

    // Assess
    expect(empty.status).toBe(400);
    expect(script.status).toBe(400);
    expect(script.body.error.details).toEqual([{ path: 'body.avatar_url', message: expect.any(String) }]);
  });
});

describe('DELETE /organizations/{id}', () => {
  it('soft-deletes for the owner: the organization disappears and its slug becomes free', async () => {
    // Prepare
    const owner = await newUser('owner');
    const member = await newUser('member');
    const slug = `gone-${Math.random().toString(36).slice(2, 8)}`;
    const orgId = (await api('POST', '/organizations', { token: owner.token, body: { name: 'Gone', slug } })).body.data
      .id;
    await addAs(owner, orgId, member, 'member');

    // Act
    const response = await api('DELETE', `/organizations/${orgId}`, { token: owner.token });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: { id: orgId, deleted_at: expect.any(String) },
      meta: { deleted: true },
    });
    expect((await api('GET', `/organizations/${orgId}`, { token: owner.token })).status).toBe(404);
    expect((await api('GET', `/organizations/${orgId}/members`, { token: member.token })).status).toBe(404);
    const listed = await api('GET', '/organizations', { token: member.token });
    expect(listed.body.data.map((org: { id: string }) => org.id)).toEqual([member.orgId]);
    expect(listed.body.meta.total).toBe(1);
    expect((await api('DELETE', `/organizations/${orgId}`, { token: owner.token })).status).toBe(404);
    const reuse = await api('POST', '/organizations', { token: owner.token, body: { name: 'New', slug } });
    expect(reuse.status).toBe(201);
  });

  it('answers 403 to an admin and to an instance admin, who are not owners', async () => {
    // Prepare
    const owner = await newUser('owner');
    const admin = await newUser('admin');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, admin, 'admin');

    // Act
    const asAdmin = await api('DELETE', `/organizations/${orgId}`, { token: admin.token });
    const asInstanceAdmin = await api('DELETE', `/organizations/${orgId}`, { token: instanceAdmin.token });

    // Assess
    expect(asAdmin.status).toBe(403);
    expect(asInstanceAdmin.status).toBe(403);
    expect((await api('GET', `/organizations/${orgId}`, { token: owner.token })).status).toBe(200);
  });

  it('answers 409 for a personal organization, which goes only with its account', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await api('DELETE', `/organizations/${owner.orgId}`, { token: owner.token });

    // Assess
    expect(response.status).toBe(409);
    expect((await api('GET', `/organizations/${owner.orgId}`, { token: owner.token })).status).toBe(200);
  });
});

describe('organization members', () => {
  it('adds a user by a numeric string id as a member by default and counts them', async () => {
    // Prepare
    const owner = await newUser('owner');
    const newcomer = await newUser('newcomer');
    const orgId = await orgOf(owner);

    // Act
    const response = await api('POST', `/organizations/${orgId}/members`, {
      token: owner.token,
      body: { user_id: String(newcomer.id) },
    });

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        user_id: newcomer.id,
        username: newcomer.username,
        email: newcomer.email,
        role: 'member',
        joined_at: expect.any(String),
      },
    });
    expect(await memberCountOf(owner, orgId)).toBe(2);
    const members = await api('GET', `/organizations/${orgId}/members`, { token: newcomer.token });
    expect(members.body.meta).toEqual({ total: 2, limit: 50, offset: 0 });
    expect(members.body.data.map((member: { user_id: number; role: string }) => [member.user_id, member.role])).toEqual(
      [
        [owner.id, 'owner'],
        [newcomer.id, 'member'],
      ],
    );
    expectNoInternals([response.body, members.body]);
  });

  it('answers 404 for an unknown user and 409 for a member already, leaving the count alone', async () => {
    // Prepare
    const owner = await newUser('owner');
    const member = await newUser('member');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, member, 'member');

    // Act
    const unknown = await api('POST', `/organizations/${orgId}/members`, {
      token: owner.token,
      body: { user_id: '999999' },
    });
    const again = await api('POST', `/organizations/${orgId}/members`, {
      token: owner.token,
      body: { user_id: String(member.id), role: 'admin' },
    });

    // Assess
    expect(unknown.status).toBe(404);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
    expect(await memberCountOf(owner, orgId)).toBe(2);
  });

  it('lets only an owner add an owner, and answers 403 to members and viewers adding anyone', async () => {
    // Prepare
    const owner = await newUser('owner');
    const admin = await newUser('admin');
    const member = await newUser('member');
    const viewer = await newUser('viewer');
    const candidate = await newUser('candidate');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, admin, 'admin');
    await addAs(owner, orgId, member, 'member');
    await addAs(owner, orgId, viewer, 'viewer');
    const body = (role: string) => ({ user_id: String(candidate.id), role });

    // Act
    const adminAddsOwner = await api('POST', `/organizations/${orgId}/members`, {
      token: admin.token,
      body: body('owner'),
    });
    const memberAdds = await api('POST', `/organizations/${orgId}/members`, {
      token: member.token,
      body: body('viewer'),
    });
    const viewerAdds = await api('POST', `/organizations/${orgId}/members`, {
      token: viewer.token,
      body: body('viewer'),
    });
    const adminAddsAdmin = await api('POST', `/organizations/${orgId}/members`, {
      token: admin.token,
      body: body('admin'),
    });

    // Assess
    expect(adminAddsOwner.status).toBe(403);
    expect(memberAdds.status).toBe(403);
    expect(viewerAdds.status).toBe(403);
    expect(adminAddsAdmin.status).toBe(201);
    expect(adminAddsAdmin.body.data.role).toBe('admin');
    expect(await memberCountOf(owner, orgId)).toBe(5);
  });

  it('answers 400 for a user_id that is not a number and for an unknown role', async () => {
    // Prepare
    const owner = await newUser('owner');
    const orgId = await orgOf(owner);

    // Act
    const notNumeric = await api('POST', `/organizations/${orgId}/members`, {
      token: owner.token,
      body: { user_id: 'abc' },
    });
    const missing = await api('POST', `/organizations/${orgId}/members`, { token: owner.token, body: {} });
    const badRole = await api('POST', `/organizations/${orgId}/members`, {
      token: owner.token,
      body: { user_id: '1', role: 'emperor' },
    });

    // Assess
    expect(notNumeric.status).toBe(400);
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([{ path: 'body.user_id', message: expect.any(String) }]);
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.details).toEqual([{ path: 'body.role', message: expect.any(String) }]);
  });

  it('changes a role, refusing to demote the last owner until there is another one', async () => {
    // Prepare
    const owner = await newUser('owner');
    const member = await newUser('member');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, member, 'member');

    // Act
    const promoted = await api('PATCH', `/organizations/${orgId}/members/${member.id}`, {
      token: owner.token,
      body: { role: 'admin' },
    });
    const lastOwner = await api('PATCH', `/organizations/${orgId}/members/${owner.id}`, {
      token: owner.token,
      body: { role: 'member' },
    });
    const secondOwner = await api('PATCH', `/organizations/${orgId}/members/${member.id}`, {
      token: owner.token,
      body: { role: 'owner' },
    });
    const demoted = await api('PATCH', `/organizations/${orgId}/members/${owner.id}`, {
      token: owner.token,
      body: { role: 'viewer' },
    });
    const nowLast = await api('PATCH', `/organizations/${orgId}/members/${member.id}`, {
      token: member.token,
      body: { role: 'admin' },
    });

    // Assess
    expect(promoted.status).toBe(200);
    expect(promoted.body.data).toEqual({
      user_id: member.id,
      username: member.username,
      email: member.email,
      role: 'admin',
      joined_at: expect.any(String),
    });
    expect(lastOwner.status).toBe(409);
    expect(lastOwner.body.error.code).toBe('CONFLICT');
    expect(secondOwner.status).toBe(200);
    expect(demoted.status).toBe(200);
    expect(demoted.body.data.role).toBe('viewer');
    expect(nowLast.status).toBe(409);
  });

  it('answers 403 when an admin makes or unmakes an owner, 404 for a non-member and 400 without a role', async () => {
    // Prepare
    const owner = await newUser('owner');
    const admin = await newUser('admin');
    const member = await newUser('member');
    const outsider = await newUser('outsider');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, admin, 'admin');
    await addAs(owner, orgId, member, 'member');

    // Act
    const demoteOwner = await api('PATCH', `/organizations/${orgId}/members/${owner.id}`, {
      token: admin.token,
      body: { role: 'member' },
    });
    const makeOwner = await api('PATCH', `/organizations/${orgId}/members/${member.id}`, {
      token: admin.token,
      body: { role: 'owner' },
    });
    const memberChanges = await api('PATCH', `/organizations/${orgId}/members/${admin.id}`, {
      token: member.token,
      body: { role: 'viewer' },
    });
    const notMember = await api('PATCH', `/organizations/${orgId}/members/${outsider.id}`, {
      token: owner.token,
      body: { role: 'viewer' },
    });
    const noRole = await api('PATCH', `/organizations/${orgId}/members/${member.id}`, {
      token: owner.token,
      body: {},
    });
    const adminDemotesMember = await api('PATCH', `/organizations/${orgId}/members/${member.id}`, {
      token: admin.token,
      body: { role: 'viewer' },
    });

    // Assess
    expect(demoteOwner.status).toBe(403);
    expect(makeOwner.status).toBe(403);
    expect(memberChanges.status).toBe(403);
    expect(notMember.status).toBe(404);
    expect(noRole.status).toBe(400);
    expect(adminDemotesMember.status).toBe(200);
  });

  it('removes a member and decrements the count, but never the last owner', async () => {
    // Prepare
    const owner = await newUser('owner');
    const admin = await newUser('admin');
    const member = await newUser('member');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, admin, 'admin');
    await addAs(owner, orgId, member, 'member');

    // Act
    const removed = await api('DELETE', `/organizations/${orgId}/members/${member.id}`, {
      token: admin.token,
    });
    const lastOwner = await api('DELETE', `/organizations/${orgId}/members/${owner.id}`, {
      token: owner.token,
    });
    const adminRemovesOwner = await api('DELETE', `/organizations/${orgId}/members/${owner.id}`, {
      token: admin.token,
    });
    const again = await api('DELETE', `/organizations/${orgId}/members/${member.id}`, { token: admin.token });

    // Assess
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({
      data: { organization_id: orgId, user_id: member.id },
      meta: { deleted: true },
    });
    expect(lastOwner.status).toBe(409);
    expect(adminRemovesOwner.status).toBe(403);
    expect(again.status).toBe(404);
    expect(await memberCountOf(owner, orgId)).toBe(2);
    expect((await api('GET', `/organizations/${orgId}`, { token: member.token })).status).toBe(404);
  });

  it('lets an owner leave once another owner exists, and answers 403 to a member removing others', async () => {
    // Prepare
    const owner = await newUser('owner');
    const coOwner = await newUser('coowner');
    const member = await newUser('member');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, coOwner, 'owner');
    await addAs(owner, orgId, member, 'member');

    // Act
    const memberRemoves = await api('DELETE', `/organizations/${orgId}/members/${coOwner.id}`, {
      token: member.token,
    });
    const ownerLeaves = await api('DELETE', `/organizations/${orgId}/members/${owner.id}`, {
      token: owner.token,
    });

    // Assess
    expect(memberRemoves.status).toBe(403);
    expect(ownerLeaves.status).toBe(200);
    expect(await memberCountOf(coOwner, orgId)).toBe(2);
    const members = await api('GET', `/organizations/${orgId}/members`, { token: coOwner.token });
    expect(members.body.data.map((entry: { user_id: number }) => entry.user_id)).toEqual([coOwner.id, member.id]);
  });

  it('keeps a user in their personal organization', async () => {
    // Prepare
    const owner = await newUser('owner');
    const coOwner = await newUser('coowner');
    await addAs(owner, owner.orgId, coOwner, 'owner');

    // Act
    const response = await api('DELETE', `/organizations/${owner.orgId}/members/${owner.id}`, {
      token: coOwner.token,
    });

    // Assess
    expect(response.status).toBe(409);
    expect(await memberCountOf(owner, owner.orgId)).toBe(2);
  });

  it('lets an instance admin manage members of any organization, but not as an owner', async () => {
    // Prepare
    const owner = await newUser('owner');
    const candidate = await newUser('candidate');
    const orgId = await orgOf(owner);

    // Act
    const listed = await api('GET', `/organizations/${orgId}/members`, { token: instanceAdmin.token });
    const added = await api('POST', `/organizations/${orgId}/members`, {
      token: instanceAdmin.token,
      body: { user_id: String(candidate.id), role: 'admin' },
    });
    const addsOwner = await api('POST', `/organizations/${orgId}/members`, {
      token: instanceAdmin.token,
      body: { user_id: String(instanceAdmin.id), role: 'owner' },
    });
    const demotesOwner = await api('PATCH', `/organizations/${orgId}/members/${owner.id}`, {
      token: instanceAdmin.token,
      body: { role: 'admin' },
    });

    // Assess
    expect(listed.status).toBe(200);
    expect(added.status).toBe(201);
    expect(addsOwner.status).toBe(403);
    expect(demotesOwner.status).toBe(403);
  });
});

describe('organization invites', () => {
  it('invites by email, lists the invite without its token, and the invitee accepts it once', async () => {
    // Prepare
    const owner = await newUser('owner');
    const invitee = await newUser('invitee');
    const orgId = await orgOf(owner);

    // Act
    const invited = await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: invitee.email, role: 'admin' },
    });
    const token = invitedToken(invitee.email);
    const pending = await api('GET', `/organizations/${orgId}/invites`, { token: owner.token });
    const accepted = await api('POST', `/organizations/invites/${encodeURIComponent(token)}/accept`, {
      token: invitee.token,
    });
    const again = await api('POST', `/organizations/invites/${encodeURIComponent(token)}/accept`, {
      token: invitee.token,
    });

    // Assess
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({
      data: {
        id: expect.stringMatching(/^inv_/),
        email: invitee.email,
        role: 'admin',
        status: 'pending',
        expires_at: expect.any(String),
        created_at: expect.any(String),
        invited_by: owner.id,
      },
    });
    const validity = Date.parse(invited.body.data.expires_at) - Date.parse(invited.body.data.created_at);
    expect(validity).toBe(7 * DAY_MS);
    const email = outboxFor(invitee.email).at(-1);
    expect(email?.text).toContain(`/api/organizations/invites/${encodeURIComponent(token)}/accept`);
    expect(pending.body).toEqual({ data: [invited.body.data], meta: { total: 1, limit: 50, offset: 0 } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toEqual({
      organization: expect.objectContaining({ id: orgId, member_count: 2 }),
      member: {
        user_id: invitee.id,
        username: invitee.username,
        email: invitee.email,
        role: 'admin',
        joined_at: expect.any(String),
      },
    });
    expect(again.status).toBe(404);
    expect(await memberCountOf(owner, orgId)).toBe(2);
    const afterwards = await api('GET', `/organizations/${orgId}/invites`, { token: owner.token });
    expect(afterwards.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    const asNewAdmin = await api('GET', `/organizations/${orgId}/members`, { token: invitee.token });
    expect(asNewAdmin.body.meta.total).toBe(2);
    for (const response of [invited, pending, accepted, again, afterwards, asNewAdmin]) {
      expect(JSON.stringify(response.body)).not.toContain(token);
      expectNoInternals(response.body);
    }
  });

  it('answers 409 to a second invite for an address with an active one, case-insensitively', async () => {
    // Prepare
    const owner = await newUser('owner');
    const orgId = await orgOf(owner);
    const address = `Person.${Math.random().toString(36).slice(2, 8)}@example.com`;
    await api('POST', `/organizations/${orgId}/invites`, { token: owner.token, body: { email: address } });

    // Act
    const again = await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: address.toLowerCase(), role: 'viewer' },
    });
    const elsewhere = await api('POST', `/organizations/${owner.orgId}/invites`, {
      token: owner.token,
      body: { email: address },
    });

    // Assess
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: [{ path: 'body.email' }] });
    expect(elsewhere.status).toBe(201);
    expect(outboxFor(address)).toHaveLength(2);
  });

  it('answers 404 when the invite has expired, and lets a new invite replace it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const invitee = await newUser('invitee');
    const orgId = await orgOf(owner);
    await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: invitee.email },
    });
    const expiredToken = invitedToken(invitee.email);
    const eightDaysLater = handlerDaysAhead(8);

    // Act
    const accept = await call(eightDaysLater, 'POST', `/organizations/invites/${expiredToken}/accept`, {
      token: invitee.token,
    });
    const pending = await call(eightDaysLater, 'GET', `/organizations/${orgId}/invites`, {
      token: owner.token,
    });
    const replacement = await call(eightDaysLater, 'POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: invitee.email },
    });

    // Assess
    expect(accept.status).toBe(404);
    expect(accept.body.error.code).toBe('NOT_FOUND');
    expect(pending.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(replacement.status).toBe(201);
    expect(await memberCountOf(owner, orgId)).toBe(1);
  });

  it('answers 404 for an unknown token', async () => {
    // Prepare
    const user = await newUser('user');

    // Act
    const response = await api('POST', '/organizations/invites/not-a-real-token/accept', {
      token: user.token,
    });

    // Assess
    expect(response.status).toBe(404);
  });

  it('answers 409 when the accepting user is a member already, and keeps the invite pending', async () => {
    // Prepare
    const owner = await newUser('owner');
    const member = await newUser('member');
    const invitee = await newUser('invitee');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, member, 'member');
    await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: invitee.email },
    });
    const token = invitedToken(invitee.email);

    // Act
    const byMember = await api('POST', `/organizations/invites/${token}/accept`, { token: member.token });
    const byInvitee = await api('POST', `/organizations/invites/${token}/accept`, { token: invitee.token });

    // Assess
    expect(byMember.status).toBe(409);
    expect(byInvitee.status).toBe(200);
    expect(byInvitee.body.data.member.role).toBe('member');
    expect(await memberCountOf(owner, orgId)).toBe(3);
  });

  it('lets only one of two concurrent accepts of the same invite through', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await newUser('first');
    const second = await newUser('second');
    const orgId = await orgOf(owner);
    await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: first.email },
    });
    const token = invitedToken(first.email);

    // Act
    const responses = await Promise.all(
      [first, second].map((user) => api('POST', `/organizations/invites/${token}/accept`, { token: user.token })),
    );

    // Assess
    expect(responses.map((response) => response.status).sort()).toEqual([200, 404]);
    expect(await memberCountOf(owner, orgId)).toBe(2);
  });

  it('answers 403 when a member invites, 409 for a member’s address, 400 for an owner role or bad email', async () => {
    // Prepare
    const owner = await newUser('owner');
    const member = await newUser('member');
    const orgId = await orgOf(owner);
    await addAs(owner, orgId, member, 'member');

    // Act
    const byMember = await api('POST', `/organizations/${orgId}/invites`, {
      token: member.token,
      body: { email: 'someone@example.com' },
    });
    const existing = await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: member.email.toUpperCase() },
    });
    const asOwner = await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: 'someone@example.com', role: 'owner' },
    });
    const badEmail = await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: 'not-an-email' },
    });

    // Assess
    expect(byMember.status).toBe(403);
    expect(existing.status).toBe(409);
    expect(asOwner.status).toBe(400);
    expect(asOwner.body.error.details).toEqual([{ path: 'body.role', message: expect.any(String) }]);
    expect(badEmail.status).toBe(400);
    expect(outboxFor('someone@example.com')).toEqual([]);
  });
});

describe('tenant isolation', () => {
  it('answers 404 to a user of another organization for its record, members and invites', async () => {
    // Prepare
    const owner = await newUser('owner');
    const outsider = await newUser('outsider');
    const orgId = await orgOf(owner);
    await api('POST', `/organizations/${orgId}/invites`, {
      token: owner.token,
      body: { email: `guest.${Math.random().toString(36).slice(2, 8)}@example.com` },
    });
    const as = { token: outsider.token };

    // Act
    const responses = [
      await api('GET', `/organizations/${orgId}`, as),
      await api('PATCH', `/organizations/${orgId}`, { ...as, body: { name: 'Mine now' } }),
      await api('DELETE', `/organizations/${orgId}`, as),
      await api('GET', `/organizations/${orgId}/members`, as),
      await api('POST', `/organizations/${orgId}/members`, { ...as, body: { user_id: String(outsider.id) } }),
      await api('PATCH', `/organizations/${orgId}/members/${owner.id}`, { ...as, body: { role: 'viewer' } }),
      await api('DELETE', `/organizations/${orgId}/members/${owner.id}`, as),
      await api('GET', `/organizations/${orgId}/invites`, as),
      await api('POST', `/organizations/${orgId}/invites`, { ...as, body: { email: outsider.email } }),
    ];

    // Assess
    expect(responses.map((response) => response.status)).toEqual([404, 404, 404, 404, 404, 404, 404, 404, 404]);
    for (const response of responses) expect(response.body.error.code).toBe('NOT_FOUND');
    expect(await memberCountOf(owner, orgId)).toBe(1);
    expect((await api('GET', `/organizations/${orgId}`, { token: owner.token })).body.data.name).not.toBe('Mine now');
  });

  it('lets an API key reach only its own organization, its admin scope counting as admin', async () => {
    // Prepare
    const owner = await newUser('owner');
    const candidate = await newUser('candidate');
    const orgId = await orgOf(owner);
    const otherOrg = await orgOf(owner);
    const adminKey = await apiKeyFor(orgId, ['admin']);
    const readKey = await apiKeyFor(orgId, ['read']);

    // Act
    const own = await api('GET', `/organizations/${orgId}`, { token: adminKey });
    const other = await api('GET', `/organizations/${otherOrg}`, { token: adminKey });
    const listed = await api('GET', '/organizations', { token: readKey });
    const added = await api('POST', `/organizations/${orgId}/members`, {
      token: adminKey,
      body: { user_id: String(candidate.id) },
    });
    const deleteAsKey = await api('DELETE', `/organizations/${orgId}`, { token: adminKey });
    const readKeyWrites = await api('POST', `/organizations/${orgId}/invites`, {
      token: readKey,
      body: { email: 'keyed@example.com' },
    });
    const invitedByKey = await api('POST', `/organizations/${orgId}/invites`, {
      token: adminKey,
      body: { email: `keyed.${Math.random().toString(36).slice(2, 8)}@example.com` },
    });

    // Assess
    expect(own.status).toBe(200);
    expect(other.status).toBe(404);
    expect(listed.body).toEqual({
      data: [expect.objectContaining({ id: orgId })],
      meta: { total: 1, limit: 50, offset: 0 },
    });
    expect(added.status).toBe(201);
    expect(deleteAsKey.status).toBe(403);
    expect(readKeyWrites.status).toBe(403);
    expect(invitedByKey.status).toBe(201);
    expect(invitedByKey.body.data.invited_by).toBeNull();
  });
});
