import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler as auth } from '#functions/http/auth';
import { handler as users } from '#functions/http/users';
import { db, TABLE } from '#lib/db/client';
import { groupHandler, route } from '#lib/http/group-handler';
import { identityKeys } from '#lib/identity/keys';
import { fixedClock } from '#lib/kernel/clock';
import { logger } from '#lib/logger';
import { me } from '#lib/routes/auth';
import { call, login, newUser, outboxFor } from '#tests/support/identity';
import { captureLogs } from '#tests/support/logs';

const registration = (name: string, overrides: Record<string, unknown> = {}) => ({
  username: name,
  email: `${name}@example.com`,
  password: 'long enough password',
  terms_accepted: true,
  privacy_accepted: true,
  ...overrides,
});

afterEach(() => {
  vi.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

describe('POST /auth/register', () => {
  it('creates the first user as the instance admin and later ones as members', async () => {
    // Act
    const first = await call(auth, 'POST', '/auth/register', { body: registration('Founder') });
    const second = await call(auth, 'POST', '/auth/register', { body: registration('second') });

    // Assess
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      data: {
        id: 1,
        username: 'Founder',
        email: 'Founder@example.com',
        role: 'admin',
        avatar_url: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    expect(second.body.data.role).toBe('member');
    expect(JSON.stringify([first.body, second.body])).not.toMatch(/password|scrypt|hash/i);
  });

  it('answers 409 when the username or email exists, case-insensitively', async () => {
    await call(auth, 'POST', '/auth/register', { body: registration('taken') });

    const sameName = await call(auth, 'POST', '/auth/register', {
      body: registration('TAKEN', { email: 'other@example.com' }),
    });
    const sameEmail = await call(auth, 'POST', '/auth/register', {
      body: registration('fresh', { email: 'Taken@Example.com' }),
    });

    expect(sameName.status).toBe(409);
    expect(sameName.body.error).toMatchObject({ code: 'CONFLICT', details: [{ path: 'body.username' }] });
    expect(sameEmail.status).toBe(409);
    expect(sameEmail.body.error).toMatchObject({ code: 'CONFLICT', details: [{ path: 'body.email' }] });
  });

  it.each([
    ['no username', { username: undefined }, 'body.username'],
    ['a bad email', { email: 'not-an-email' }, 'body.email'],
    ['a short password', { password: 'short' }, 'body.password'],
    ['terms not accepted', { terms_accepted: false }, 'body.terms_accepted'],
    ['privacy not accepted', { privacy_accepted: undefined }, 'body.privacy_accepted'],
  ])('answers 400 for %s', async (_case, overrides, path) => {
    const response = await call(auth, 'POST', '/auth/register', { body: registration('valid', overrides) });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(response.body.error.details.map((detail: { path: string }) => detail.path)).toContain(path);
  });
});

describe('POST /auth/login', () => {
  it('returns the login response and sets an HttpOnly session cookie', async () => {
    // Prepare
    const user = await newUser('login');

    // Act
    const response = await call(auth, 'POST', '/auth/login', {
      body: { email: user.email, password: user.password },
      headers: { 'x-forwarded-proto': 'https' },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      success: true,
      token: expect.stringMatching(/^ey/),
      refresh_token: expect.stringMatching(/^rt_/),
      expires_in: 3600,
      organization_id: user.orgId,
      user: { id: user.id, username: user.username },
    });
    expect(response.cookies).toEqual([
      expect.stringMatching(/^service_jwt=ey[^;]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax; Secure$/),
    ]);
  });

  it('answers wrong password and unknown email with the same 401', async () => {
    const user = await newUser('wrong');
    const wrongPassword = await call(auth, 'POST', '/auth/login', {
      body: { email: user.email, password: 'nope-nope' },
    });
    const unknown = await call(auth, 'POST', '/auth/login', {
      body: { email: 'ghost@example.com', password: 'nope-nope' },
    });

    expect(wrongPassword.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrongPassword.body).toEqual(unknown.body);
  });

  it('answers 400 for missing credentials', async () => {
    const response = await call(auth, 'POST', '/auth/login', { body: { email: 'a@example.com' } });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ path: 'body.password', message: expect.any(String) }]);
  });

  it('refuses further logins for an email after 10 failures, even with the right password', async () => {
    // Prepare
    const user = await newUser('throttled');
    for (let attempt = 0; attempt < 10; attempt++) {
      const failed = await call(auth, 'POST', '/auth/login', {
        body: { email: user.email, password: `guess-${attempt}` },
      });
      expect(failed.status).toBe(401);
    }

    // Act
    const blocked = await call(auth, 'POST', '/auth/login', {
      body: { email: user.email, password: user.password },
    });

    // Assess
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['Retry-After'])).toBeGreaterThan(0);
    expect(Number(blocked.headers['Retry-After'])).toBeLessThanOrEqual(900);
  });

  it('writes no password, hash or token into its logs', async () => {
    // Prepare
    const lines = captureLogs('DEBUG');
    const user = await newUser('quiet');

    // Act
    await call(auth, 'POST', '/auth/login', { body: { email: user.email, password: 'the-wrong-secret' } });
    const ok = await call(auth, 'POST', '/auth/login', {
      body: { email: user.email, password: user.password },
    });

    // Assess
    const logged = lines.join('');
    expect(logged).not.toContain('the-wrong-secret');
    expect(logged).not.toContain(user.password);
    expect(logged).not.toContain(ok.body.data.token);
    expect(logged).not.toContain(ok.body.data.refresh_token);
    expect(logged).not.toContain('scrypt$');
  });
});

describe('bearer authentication', () => {
  it('answers GET /auth/me with the user, the organization and how the caller authenticated', async () => {
    const user = await newUser('me');
    const response = await call(auth, 'GET', '/auth/me', { token: user.token });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id: user.id,
      username: user.username,
      email: user.email,
      organization: { id: user.orgId, role: 'owner' },
      auth: { method: 'jwt', capability: 'write', scopes: [], key_id: null },
    });
  });

  it.each([
    ['no credential', undefined],
    ['a malformed token', 'not-a-jwt'],
    ['an unknown API key', 'osk_live_nothing'],
  ])('answers 401 for %s', async (_case, token) => {
    const response = await call(auth, 'GET', '/auth/me', token ? { token } : {});
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
  });

  it('answers 401 for a token signed with another key, one with alg none, and an expired one', async () => {
    // Prepare
    const user = await newUser('forged');
    const claims = { org: user.orgId, tv: 0 };
    const otherKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('agent-operations')
      .setAudience('agent-operations-api')
      .setSubject(String(user.id))
      .setJti('x')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-that-is-long-enough-000000000'));
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(
      JSON.stringify({
        ...claims,
        sub: String(user.id),
        iss: 'agent-operations',
        aud: 'agent-operations-api',
        jti: 'y',
        exp: 9_999_999_999,
      }),
    ).toString('base64url');
    const unsigned = `${header}.${payload}.`;
    const later = fixedClock(new Date(Date.now() + 2 * 3600_000));
    const meLater = groupHandler('auth', [route(me, async ({ principal }) => principal)], {
      ports: { clock: later },
    });

    // Act
    const responses = [
      await call(auth, 'GET', '/auth/me', { token: otherKey }),
      await call(auth, 'GET', '/auth/me', { token: unsigned }),
      await call(meLater, 'GET', '/auth/me', { token: user.token }),
    ];

    // Assess
    expect(responses.map((response) => response.status)).toEqual([401, 401, 401]);
  });

  it('accepts the session cookie; changes made with it need an allowed Origin or X-Requested-With', async () => {
    const user = await newUser('cookie');
    const cookie = `service_jwt=${user.token}`;

    const read = await call(auth, 'GET', '/auth/me', { headers: { cookie } });
    const bare = await call(auth, 'POST', '/auth/logout', { headers: { cookie } });
    const foreign = await call(auth, 'POST', '/auth/logout', {
      headers: { cookie, origin: 'https://evil.example' },
    });
    const allowed = await call(auth, 'POST', '/auth/logout', {
      headers: { cookie, 'x-requested-with': 'XMLHttpRequest' },
    });

    expect(read.status).toBe(200);
    expect(read.body.data.auth.method).toBe('cookie');
    expect(bare.status).toBe(403);
    expect(foreign.status).toBe(403);
    expect(allowed.status).toBe(200);
  });

  it('switches organization with X-Organization-Id for members and answers 403 otherwise', async () => {
    // Prepare: the member joins the owner's organization as a viewer.
    const owner = await newUser('owner');
    const member = await newUser('member');
    await db.send(
      new PutCommand({
        TableName: TABLE,
        Item: {
          ...identityKeys.membership(owner.orgId, member.id),
          ...identityKeys.membershipByUser(member.id, owner.orgId),
          org_id: owner.orgId,
          user_id: member.id,
          role: 'viewer',
          joined_at: new Date().toISOString(),
        },
      }),
    );
    const stranger = await newUser('stranger');

    // Act
    const switched = await call(auth, 'GET', '/auth/me', {
      token: member.token,
      headers: { 'x-organization-id': owner.orgId },
    });
    const refused = await call(auth, 'GET', '/auth/me', {
      token: stranger.token,
      headers: { 'x-organization-id': owner.orgId },
    });
    const viewerWrite = await call(users, 'DELETE', '/users/999', {
      token: member.token,
      headers: { 'x-organization-id': owner.orgId },
    });

    // Assess
    expect(switched.body.data.organization).toMatchObject({ id: owner.orgId, role: 'viewer' });
    expect(switched.body.data.auth.capability).toBe('read');
    expect(refused.status).toBe(403);
    expect(viewerWrite.status).toBe(403);
  });
});

describe('POST /auth/logout', () => {
  it('revokes the current token at once and leaves the user’s other sessions alone', async () => {
    const user = await newUser('logout');
    const other = await login(user.email, user.password);

    const out = await call(auth, 'POST', '/auth/logout', { token: user.token });

    expect(out.status).toBe(200);
    expect(out.body.data).toEqual({ success: true, all_devices: false });
    expect(out.cookies[0]).toMatch(/^service_jwt=; Path=\/; Max-Age=0/);
    expect((await call(auth, 'GET', '/auth/me', { token: user.token })).status).toBe(401);
    expect((await call(auth, 'GET', '/auth/me', { token: other.token })).status).toBe(200);
  });

  it('ends the session’s refresh token too, also after a refresh, and leaves other sessions’ alone', async () => {
    // Prepare: one session refreshed once (a token of the same login), another session of the user.
    const user = await newUser('logoutrefresh');
    const other = await login(user.email, user.password);
    const renewed = await call(auth, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } });

    // Act
    const out = await call(auth, 'POST', '/auth/logout', { token: renewed.body.data.token });
    const again = await call(auth, 'POST', '/auth/refresh', {
      body: { refresh_token: renewed.body.data.refresh_token },
    });
    const otherRenewed = await call(auth, 'POST', '/auth/refresh', { body: { refresh_token: other.refreshToken } });

    // Assess
    expect(out.status).toBe(200);
    expect(again.status).toBe(401);
    expect(otherRenewed.status).toBe(200);
    expect((await call(auth, 'GET', '/auth/me', { token: otherRenewed.body.data.token })).status).toBe(200);
  });

  it('ends every access token of the login, also one issued before its last refresh', async () => {
    // Prepare: the login's first access token, still within its hour, and the one its refresh gave.
    const user = await newUser('logoutearlier');
    const renewed = await call(auth, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } });
    expect((await call(auth, 'GET', '/auth/me', { token: user.token })).status).toBe(200);

    // Act
    await call(auth, 'POST', '/auth/logout', { token: renewed.body.data.token });

    // Assess
    expect((await call(auth, 'GET', '/auth/me', { token: user.token })).status).toBe(401);
    expect((await call(auth, 'GET', '/auth/me', { token: renewed.body.data.token })).status).toBe(401);
  });

  it('with all_devices revokes every token of the user, refresh tokens included', async () => {
    const user = await newUser('everywhere');
    const other = await login(user.email, user.password);

    await call(auth, 'POST', '/auth/logout', { token: user.token, body: { all_devices: true } });

    expect((await call(auth, 'GET', '/auth/me', { token: user.token })).status).toBe(401);
    expect((await call(auth, 'GET', '/auth/me', { token: other.token })).status).toBe(401);
    expect((await call(auth, 'POST', '/auth/refresh', { body: { refresh_token: other.refreshToken } })).status).toBe(
      401,
    );
    expect((await login(user.email, user.password)).token).toBeTruthy();
  });
});

describe('POST /auth/refresh', () => {
  it('exchanges a refresh token for a new session once', async () => {
    const user = await newUser('refresh');

    const renewed = await call(auth, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } });

    expect(renewed.status).toBe(200);
    expect(renewed.body.data.refresh_token).not.toBe(user.refreshToken);
    expect((await call(auth, 'GET', '/auth/me', { token: renewed.body.data.token })).status).toBe(200);
  });

  it('revokes the whole family when a spent refresh token is presented again', async () => {
    const user = await newUser('replay');
    const renewed = await call(auth, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } });

    const replay = await call(auth, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } });
    const descendant = await call(auth, 'POST', '/auth/refresh', {
      body: { refresh_token: renewed.body.data.refresh_token },
    });

    expect(replay.status).toBe(401);
    expect(descendant.status).toBe(401);
  });

  it('answers 401 for an unknown refresh token and 400 for none', async () => {
    expect((await call(auth, 'POST', '/auth/refresh', { body: { refresh_token: 'rt_unknown' } })).status).toBe(401);
    expect((await call(auth, 'POST', '/auth/refresh', { body: {} })).status).toBe(400);
  });
});

describe('password reset', () => {
  it('answers forgot-password the same for known and unknown addresses and mails only the known one', async () => {
    const user = await newUser('forgot');

    const known = await call(auth, 'POST', '/auth/forgot-password', { body: { email: user.email } });
    const unknown = await call(auth, 'POST', '/auth/forgot-password', {
      body: { email: 'nobody@example.com' },
    });

    expect(known.status).toBe(200);
    expect(known.body).toEqual(unknown.body);
    expect(outboxFor(user.email)).toHaveLength(1);
    expect(outboxFor('nobody@example.com')).toHaveLength(0);
  });

  it('sets a new password with the mailed token once and ends the old sessions', async () => {
    // Prepare
    const user = await newUser('reset');
    await call(auth, 'POST', '/auth/forgot-password', { body: { email: user.email } });
    const token = /"token": "([^"]+)"/.exec(outboxFor(user.email)[0]?.text ?? '')?.[1] as string;

    // Act
    const reset = await call(auth, 'POST', '/auth/reset-password', {
      body: { token, password: 'a brand new password' },
    });
    const again = await call(auth, 'POST', '/auth/reset-password', {
      body: { token, password: 'yet another password' },
    });

    // Assess
    expect(reset.status).toBe(200);
    expect(again.status).toBe(400);
    expect((await call(auth, 'GET', '/auth/me', { token: user.token })).status).toBe(401);
    expect(
      (await call(auth, 'POST', '/auth/login', { body: { email: user.email, password: user.password } })).status,
    ).toBe(401);
    expect((await login(user.email, 'a brand new password')).token).toBeTruthy();
  });
});

describe('POST /auth/register with an invite code', () => {
  it('joins the invited organization with the invited role', async () => {
    // Prepare: an owner invites an address that has no account yet.
    const { handler: organizations } = await import('#functions/http/organizations');
    const owner = await newUser('inviter');
    const invited = await call(organizations, 'POST', `/organizations/${owner.orgId}/invites`, {
      token: owner.token,
      body: { email: 'newcomer@example.com', role: 'viewer' },
    });
    expect(invited.status).toBe(201);
    const code = /invites\/([^/\s]+)\/accept/.exec(outboxFor('newcomer@example.com')[0]?.text ?? '')?.[1] as string;

    // Act
    const registered = await call(auth, 'POST', '/auth/register', {
      body: registration('newcomer', { invite_code: code }),
    });
    const newcomer = await login('newcomer@example.com', 'long enough password');
    const inOrg = await call(auth, 'GET', '/auth/me', {
      token: newcomer.token,
      headers: { 'x-organization-id': owner.orgId },
    });

    // Assess
    expect(registered.status).toBe(201);
    expect(inOrg.body.data.organization).toMatchObject({ id: owner.orgId, role: 'viewer' });
  });

  it('answers 400 for an unknown code and creates no account', async () => {
    const refused = await call(auth, 'POST', '/auth/register', {
      body: registration('hopeful', { invite_code: 'not-a-real-code' }),
    });
    const retried = await call(auth, 'POST', '/auth/register', { body: registration('hopeful') });

    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ path: 'body.invite_code', message: 'is invalid or expired' }]);
    expect(retried.status).toBe(201);
  });
});
