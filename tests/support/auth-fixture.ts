import { bindings as apiKeyBindings, handler as apiKeys } from '#functions/http/api-keys';
import { handler as auth } from '#functions/http/auth';
import { handler as organizations } from '#functions/http/organizations';
import { handler as teams } from '#functions/http/teams';
import { handler as users } from '#functions/http/users';
import { groupHandler } from '#lib/http/group-handler';
import type { Capability, OrgRole } from '#lib/identity/roles';
import { fixedClock } from '#lib/kernel/clock';
import { call, joinOrganization, login, newUser, type TestUser } from '#tests/support/identity';

/**
 * The callers of the authentication matrix, made through the service's own routes: users in every
 * organization role, API keys of every scope, and credentials the service has since killed (logged out,
 * logged out everywhere, erased, revoked, rolled, past their grace, expired, deactivated, deleted, of a
 * deleted organization). Everything happens in one organization, the owner's, so that an answer differs
 * only by who asks.
 */

const HOUR = 3_600_000;

/** A valid caller and what the service should let it do. */
export interface Caller {
  name: string;
  headers: Record<string, string>;
  /** The capability the authenticator gives it (lib/identity/roles). */
  capability: Capability;
  /** A user (not an API key). */
  user: boolean;
  /**
   * Its role in the organization it acts in (the owner's, except for the instance admin, who acts in its
   * own); an API key's `admin` scope counts as `admin`.
   */
  orgRole?: OrgRole;
  instanceAdmin: boolean;
}

export interface AuthFixture {
  instanceAdmin: TestUser;
  owner: TestUser;
  /** The organization every caller acts in. */
  orgId: string;
  /** A team of that organization, made by the owner (no other caller is in it). */
  teamId: number;
  callers: {
    instanceAdmin: Caller;
    owner: Caller;
    orgAdmin: Caller;
    member: Caller;
    viewer: Caller;
    /** An admin of the organization whose instance role is `viewer`: the lesser of both, `read`. */
    roleViewer: Caller;
    readKey: Caller;
    writeKey: Caller;
    adminKey: Caller;
    /** A key rotated a moment ago: its previous secret is inside the 24-hour grace. */
    keyInGrace: Caller;
  };
  /** Credentials the service no longer accepts, by what killed them. */
  dead: {
    loggedOut: string;
    loggedOutEverywhere: string;
    otherSessionLoggedOutEverywhere: string;
    erasedUser: string;
    revokedKey: string;
    rolledKey: string;
    keyPastGrace: string;
    expiredKey: string;
    inactiveKey: string;
    deletedKey: string;
    keyOfDeletedOrganization: string;
  };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function ok(response: Promise<{ status: number; body: unknown }>, status: number, what: string) {
  const answer = await response;
  if (answer.status !== status) throw new Error(`${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  // biome-ignore lint/suspicious/noExplicitAny: the data of whichever route was called
  return (answer.body as any).data;
}

export async function authFixture(): Promise<AuthFixture> {
  // The first user of a test file is the instance admin; the owner and the others are ordinary users.
  const instanceAdmin = await newUser('matrixadmin');
  const [owner, orgAdmin, member, viewer, roleViewer] = await Promise.all([
    newUser('owner'),
    newUser('orgadmin'),
    newUser('member'),
    newUser('viewer'),
    newUser('roleviewer'),
  ]);
  const orgId = owner.orgId;
  await Promise.all([
    joinOrganization(orgAdmin, orgId, 'admin'),
    joinOrganization(member, orgId, 'member'),
    joinOrganization(viewer, orgId, 'viewer'),
    joinOrganization(roleViewer, orgId, 'admin'),
  ]);
  await ok(
    call(users, 'PATCH', `/users/${roleViewer.id}`, {
      token: instanceAdmin.token,
      body: { role: 'viewer' },
    }),
    200,
    'making a user a viewer',
  );

  const keysPath = (org: string) => `/organizations/${org}/api-keys`;
  const createKey = async (body: Record<string, unknown>, handler = apiKeys, org = orgId) =>
    (await ok(
      call(handler, 'POST', keysPath(org), { token: owner.token, body: { name: 'matrix', ...body } }),
      201,
      'creating a key',
    )) as { id: string; key: string };
  const keyAction = async (key: { id: string }, action: string, body?: unknown, handler = apiKeys) =>
    ok(
      call(handler, 'POST', `${keysPath(orgId)}/${key.id}/${action}`, { token: owner.token, body }),
      200,
      `${action} of a key`,
    ) as Promise<{ key: string }>;

  const scoped = (scope: string) => createKey({ scopes: [scope] });
  const [readKey, writeKey, adminKey] = await Promise.all([scoped('read'), scoped('write'), scoped('admin')]);
  const [graceKey, revoked, rolled, inactive, deleted] = await Promise.all([
    scoped('admin'),
    scoped('admin'),
    scoped('admin'),
    scoped('admin'),
    scoped('admin'),
  ]);
  await Promise.all([
    keyAction(graceKey, 'rotate'),
    keyAction(revoked, 'revoke'),
    keyAction(rolled, 'roll'),
    ok(
      call(apiKeys, 'PATCH', `${keysPath(orgId)}/${inactive.id}`, { token: owner.token, body: { active: false } }),
      200,
      'deactivating a key',
    ),
    ok(call(apiKeys, 'DELETE', `${keysPath(orgId)}/${deleted.id}`, { token: owner.token }), 200, 'deleting a key'),
  ]);
  // Keys handled two days ago: rotated with a one-hour grace, or created to expire after an hour.
  const past = groupHandler('api-keys', apiKeyBindings, {
    ports: { clock: fixedClock(new Date(Date.now() - 48 * HOUR)) },
  });
  const pastGrace = await createKey({ scopes: ['admin'] }, past);
  await keyAction(pastGrace, 'rotate', { grace_hours: 1 }, past);
  const expired = await createKey(
    { scopes: ['admin'], expires_at: new Date(Date.now() - 47 * HOUR).toISOString() },
    past,
  );

  // An organization of the owner's, a key of it, and then the organization deleted.
  const doomed = await ok(
    call(organizations, 'POST', '/organizations', { token: owner.token, body: { name: 'Doomed' } }),
    201,
    'creating an organization',
  );
  const doomedKey = await createKey({ scopes: ['admin'] }, apiKeys, doomed.id);
  await ok(call(organizations, 'DELETE', `/organizations/${doomed.id}`, { token: owner.token }), 200, 'deleting it');

  const team = await ok(
    call(teams, 'POST', '/teams', { token: owner.token, body: { name: 'Matrix team' } }),
    201,
    'creating a team',
  );

  // Sessions ended: one by logout, two by "log out everywhere", one by erasing its user.
  const loggedOut = await login(owner.email, owner.password);
  await ok(call(auth, 'POST', '/auth/logout', { token: loggedOut.token }), 200, 'logout');
  const everywhere = await newUser('everywhere');
  const otherSession = await login(everywhere.email, everywhere.password);
  await ok(
    call(auth, 'POST', '/auth/logout', { token: everywhere.token, body: { all_devices: true } }),
    200,
    'logout everywhere',
  );
  const erased = await newUser('erased');
  await ok(call(users, 'DELETE', '/users/me', { token: erased.token }), 200, 'erasing a user');

  const inOrg = { 'x-organization-id': orgId };
  const userCaller = (name: string, user: TestUser, capability: Capability, orgRole: OrgRole): Caller => ({
    name,
    headers: { ...bearer(user.token), ...inOrg },
    capability,
    user: true,
    orgRole,
    instanceAdmin: false,
  });
  const keyCaller = (name: string, key: string, capability: Capability): Caller => ({
    name,
    headers: bearer(key),
    capability,
    user: false,
    ...(capability === 'admin' ? { orgRole: 'admin' as const } : {}),
    instanceAdmin: false,
  });
  return {
    instanceAdmin,
    owner,
    orgId,
    teamId: team.id,
    callers: {
      instanceAdmin: {
        name: 'the instance admin (in its own organization)',
        headers: bearer(instanceAdmin.token),
        capability: 'admin',
        user: true,
        orgRole: 'owner',
        instanceAdmin: true,
      },
      owner: userCaller('the owner', owner, 'write', 'owner'),
      orgAdmin: userCaller('an organization admin', orgAdmin, 'write', 'admin'),
      member: userCaller('a member', member, 'write', 'member'),
      viewer: userCaller('a viewer', viewer, 'read', 'viewer'),
      roleViewer: userCaller('an organization admin whose instance role is viewer', roleViewer, 'read', 'admin'),
      readKey: keyCaller('a read key', readKey.key, 'read'),
      writeKey: keyCaller('a write key', writeKey.key, 'write'),
      adminKey: keyCaller('an admin key', adminKey.key, 'admin'),
      keyInGrace: keyCaller('an admin key’s previous secret inside its grace', graceKey.key, 'admin'),
    },
    dead: {
      loggedOut: loggedOut.token,
      loggedOutEverywhere: everywhere.token,
      otherSessionLoggedOutEverywhere: otherSession.token,
      erasedUser: erased.token,
      revokedKey: revoked.key,
      rolledKey: rolled.key,
      keyPastGrace: pastGrace.key,
      expiredKey: expired.key,
      inactiveKey: inactive.key,
      deletedKey: deleted.key,
      keyOfDeletedOrganization: doomedKey.key,
    },
  };
}
