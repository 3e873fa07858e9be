import { beforeAll, describe, expect, it } from 'vitest';
import { handler as auth } from '#functions/http/auth';
import { handler as users } from '#functions/http/users';
import { call, joinOrganization, login, newUser, type TestUser } from '#tests/support/identity';

let admin: TestUser;

beforeAll(async () => {
  // The first user of this file's table is the instance admin.
  admin = await newUser('admin');
});

describe('GET /users', () => {
  it('shows an instance admin every user, with exact paging meta', async () => {
    await newUser('listed');
    await newUser('listed');

    const page = await call(users, 'GET', '/users', {
      token: admin.token,
      query: { limit: '2', offset: '1' },
    });

    expect(page.status).toBe(200);
    expect(page.body.meta).toEqual({ total: expect.any(Number), limit: 2, offset: 1 });
    expect(page.body.meta.total).toBeGreaterThanOrEqual(3);
    expect(page.body.data).toHaveLength(2);
    expect(JSON.stringify(page.body)).not.toMatch(/password|scrypt|token_version|"pk"/);
  });

  it('shows anyone else only the members of the organization the request acts in', async () => {
    const owner = await newUser('owner');
    const colleague = await newUser('colleague');
    await newUser('outsider');
    await joinOrganization(colleague, owner.orgId);

    const page = await call(users, 'GET', '/users', { token: owner.token });

    expect(page.body.data.map((user: { id: number }) => user.id).sort()).toEqual([owner.id, colleague.id].sort());
    expect(page.body.meta.total).toBe(2);
  });
});

describe('GET /users/{id}', () => {
  it('answers a visible user and 404 for one outside the caller’s organization', async () => {
    const owner = await newUser('seer');
    const colleague = await newUser('seen');
    const outsider = await newUser('unseen');
    await joinOrganization(colleague, owner.orgId);

    const visible = await call(users, 'GET', `/users/${colleague.id}`, { token: owner.token });
    const hidden = await call(users, 'GET', `/users/${outsider.id}`, { token: owner.token });
    const missing = await call(users, 'GET', '/users/999999', { token: admin.token });
    const invalid = await call(users, 'GET', '/users/abc', { token: admin.token });

    expect(visible.body.data).toMatchObject({ id: colleague.id, username: colleague.username });
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(invalid.status).toBe(400);
  });
});

describe('PATCH /users/{id}', () => {
  it('lets an instance admin change username, email and role, stored as given', async () => {
    const user = await newUser('patched');

    const response = await call(users, 'PATCH', `/users/${user.id}`, {
      token: admin.token,
      body: { username: `${user.username}x`, email: `x${user.email}`, role: 'builder' },
    });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      username: `${user.username}x`,
      email: `x${user.email}`,
      role: 'builder',
    });
    // The old email is free again, the new one logs in.
    expect((await login(`x${user.email}`, user.password)).id).toBe(user.id);
    const reuse = await call(auth, 'POST', '/auth/register', {
      body: {
        username: 'reuser',
        email: user.email,
        password: 'long enough password',
        terms_accepted: true,
        privacy_accepted: true,
      },
    });
    expect(reuse.status).toBe(201);
  });

  it('answers 409 to a taken email, 404 to an unknown user, 400 to an unknown role and 403 to non-admins', async () => {
    const user = await newUser('target');
    const other = await newUser('other');

    const taken = await call(users, 'PATCH', `/users/${user.id}`, {
      token: admin.token,
      body: { email: other.email },
    });
    const unknown = await call(users, 'PATCH', '/users/999999', {
      token: admin.token,
      body: { role: 'viewer' },
    });
    const badRole = await call(users, 'PATCH', `/users/${user.id}`, {
      token: admin.token,
      body: { role: 'emperor' },
    });
    const empty = await call(users, 'PATCH', `/users/${user.id}`, { token: admin.token, body: {} });
    const notAdmin = await call(users, 'PATCH', `/users/${other.id}`, {
      token: user.token,
      body: { role: 'viewer' },
    });

    expect(taken.status).toBe(409);
    expect(unknown.status).toBe(404);
    expect(badRole.status).toBe(400);
    expect(empty.status).toBe(400);
    expect(notAdmin.status).toBe(403);
  });

  it('gives a user made viewer read access only', async () => {
    const user = await newUser('demoted');
    await call(users, 'PATCH', `/users/${user.id}`, { token: admin.token, body: { role: 'viewer' } });

    const read = await call(auth, 'GET', '/auth/me', { token: user.token });
    const write = await call(users, 'PATCH', `/users/${user.id}`, {
      token: user.token,
      body: { role: 'admin' },
    });

    expect(read.body.data.auth.capability).toBe('read');
    expect(write.status).toBe(403);
  });
});

describe('DELETE /users/{id}', () => {
  it('lets an admin delete another user, whose tokens and login stop working', async () => {
    const user = await newUser('doomed');

    const response = await call(users, 'DELETE', `/users/${user.id}`, { token: admin.token });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { id: user.id }, meta: { deleted: true } });
    expect((await call(auth, 'GET', '/auth/me', { token: user.token })).status).toBe(401);
    expect(
      (await call(auth, 'POST', '/auth/login', { body: { email: user.email, password: user.password } })).status,
    ).toBe(401);
  });

  it('answers 403 for the admin’s own account, 403 for non-admins and 404 for unknown users', async () => {
    const user = await newUser('bystander');

    expect((await call(users, 'DELETE', `/users/${admin.id}`, { token: admin.token })).status).toBe(403);
    expect((await call(users, 'DELETE', `/users/${admin.id}`, { token: user.token })).status).toBe(403);
    expect((await call(users, 'DELETE', '/users/999999', { token: admin.token })).status).toBe(404);
  });
});

describe('DELETE /users/me', () => {
  it('erases the caller’s account and frees the username and email', async () => {
    const user = await newUser('leaving');

    const response = await call(users, 'DELETE', '/users/me', { token: user.token });

    expect(response.status).toBe(200);
    expect((await call(auth, 'GET', '/auth/me', { token: user.token })).status).toBe(401);
    const again = await call(auth, 'POST', '/auth/register', {
      body: {
        username: user.username,
        email: user.email,
        password: 'long enough password',
        terms_accepted: true,
        privacy_accepted: true,
      },
    });
    expect(again.status).toBe(201);
  });

  it('answers 403 for an admin account', async () => {
    const response = await call(users, 'DELETE', '/users/me', { token: admin.token });
    expect(response.status).toBe(403);
    expect(response.body.error.message).toBe('Admin accounts cannot delete themselves');
  });
});
