import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatchWriteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as teams } from '#functions/http/teams';
import { wirePorts } from '#lib/app/ports';
import { sha256 } from '#lib/crypto/secrets';
import { db, TABLE } from '#lib/db/client';
import { tenantPk } from '#lib/db/keys';
import { identityKeys } from '#lib/identity/keys';
import { teamKeys } from '#lib/identity/team-records';
import { createTeamInvite } from '#lib/identity/teams';
import { systemClock } from '#lib/kernel/clock';
import { type RequestContext, requestContext } from '#lib/kernel/context';
import {
  type CallOptions,
  type CallResult,
  call,
  joinOrganization,
  newUser,
  type TestUser,
} from '#tests/support/identity';

beforeAll(async () => {
  // The first user of this file's table is the instance admin, who counts as an admin everywhere;
  // taking that place here keeps every other user an ordinary one.
  await newUser('instanceadmin');
});

interface Organization {
  orgId: string;
  owner: TestUser;
  orgAdmin: TestUser;
  member: TestUser;
  /** Call options acting in this organization as `user`. */
  as: (user: TestUser, options?: CallOptions) => CallOptions;
}

/** An organization (the owner's personal one) with an admin and a plain member. */
async function organization(): Promise<Organization> {
  const owner = await newUser('owner');
  const orgAdmin = await newUser('orgadmin');
  const member = await newUser('member');
  await joinOrganization(orgAdmin, owner.orgId, 'admin');
  await joinOrganization(member, owner.orgId, 'member');
  return {
    orgId: owner.orgId,
    owner,
    orgAdmin,
    member,
    as: (user, options = {}) => ({
      ...options,
      token: user.token,
      headers: { 'x-organization-id': owner.orgId, ...options.headers },
    }),
  };
}

async function createTeam(options: CallOptions, name = 'Platform', description?: string) {
  const response = await call(teams, 'POST', '/teams', {
    ...options,
    body: { name, ...(description === undefined ? {} : { description }) },
  });
  if (response.status !== 201) throw new Error(`create team failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; name: string; member_count: number };
}

/** The newest invite link mailed to an address, read from the local email adapter's outbox. */
function inviteTokenSentTo(email: string): string {
  const outbox = join(process.env.DATA_DIR as string, 'outbox');
  const messages = readdirSync(outbox)
    .sort()
    .map((file) => JSON.parse(readFileSync(join(outbox, file), 'utf8')) as { to: string; text: string })
    .filter((message) => message.to === email);
  const text = messages.at(-1)?.text ?? '';
  const match = /\/teams\/invites\/([A-Za-z0-9_-]+)\/accept/.exec(text);
  if (!match) throw new Error(`no invite link was mailed to ${email}`);
  return match[1] as string;
}

/** No storage attributes and no secrets in a response. */
function expectClean(response: CallResult, token?: string) {
  const text = JSON.stringify(response.body);
  expect(text).not.toMatch(/"pk"|"sk"|"gsi1pk"|token_hash|name_lower|valid_until|"token"/);
  if (token) expect(text).not.toContain(token);
}

const emailFor = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}@example.com`;

describe('POST /teams', () => {
  it('creates a team in the active organization with the creator as its owner', async () => {
    // Prepare
    const org = await organization();

    // Act
    const response = await call(teams, 'POST', '/teams', {
      ...org.as(org.member),
      body: { name: '  Platform  ', description: 'Keeps the lights on' },
    });
    const fetched = await call(teams, 'GET', `/teams/${response.body.data.id}`, org.as(org.owner));

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.any(Number),
        name: 'Platform',
        description: 'Keeps the lights on',
        member_count: 1,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        created_by: org.member.id,
      },
    });
    expect(fetched.body.data.members).toEqual([
      {
        user_id: org.member.id,
        username: org.member.username,
        email: org.member.email,
        role: 'owner',
        joined_at: expect.any(String),
      },
    ]);
    expectClean(response);
  });

  it('numbers teams from 1 in each organization', async () => {
    // Prepare
    const first = await newUser('counter');
    const second = await newUser('counter');

    // Act
    const a1 = await createTeam({ token: first.token }, 'One');
    const a2 = await createTeam({ token: first.token }, 'Two');
    const b1 = await createTeam({ token: second.token }, 'Other');

    // Assess
    expect([a1.id, a2.id, b1.id]).toEqual([1, 2, 1]);
  });

  it('answers 400 with details when the name is missing, blank or longer than 100 characters', async () => {
    // Prepare
    const user = await newUser('badname');

    // Act
    const missing = await call(teams, 'POST', '/teams', { token: user.token, body: { description: 'x' } });
    const blank = await call(teams, 'POST', '/teams', { token: user.token, body: { name: '   ' } });
    const long = await call(teams, 'POST', '/teams', { token: user.token, body: { name: 'x'.repeat(101) } });
    const noBody = await call(teams, 'POST', '/teams', { token: user.token });

    // Assess
    for (const response of [missing, blank, long, noBody]) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect(missing.body.error.details).toEqual([{ path: 'body.name', message: expect.any(String) }]);
    expect(long.body.error.details[0].path).toBe('body.name');
  });

  it('answers 403 to an organization viewer and 401 without a credential', async () => {
    // Prepare
    const org = await organization();
    const viewer = await newUser('viewer');
    await joinOrganization(viewer, org.orgId, 'viewer');

    // Act
    const asViewer = await call(teams, 'POST', '/teams', { ...org.as(viewer), body: { name: 'Nope' } });
    const anonymous = await call(teams, 'POST', '/teams', { body: { name: 'Nope' } });

    // Assess
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.error.code).toBe('FORBIDDEN');
    expect(anonymous.status).toBe(401);
  });
});

describe('GET /teams', () => {
  it('lists the organization’s teams with member counts and exact paging meta', async () => {
    // Prepare
    const org = await organization();
    const platform = await createTeam(org.as(org.owner), 'Platform');
    await createTeam(org.as(org.owner), 'Growth');
    await createTeam(org.as(org.owner), 'Support');
    await call(teams, 'POST', `/teams/${platform.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: org.member.id },
    });

    // Act
    const all = await call(teams, 'GET', '/teams', org.as(org.member));
    const page = await call(teams, 'GET', '/teams', {
      ...org.as(org.member),
      query: { limit: '1', offset: '1' },
    });

    // Assess
    expect(all.status).toBe(200);
    expect(all.body.data.map((team: { name: string }) => team.name)).toEqual(['Platform', 'Growth', 'Support']);
    expect(all.body.data.map((team: { member_count: number }) => team.member_count)).toEqual([2, 1, 1]);
    expect(all.body.meta).toEqual({ total: 3, limit: 50, offset: 0 });
    expect(page.body.data.map((team: { name: string }) => team.name)).toEqual(['Growth']);
    expect(page.body.meta).toEqual({ total: 3, limit: 1, offset: 1 });
    expectClean(all);
  });

  it('filters by a case-insensitive part of the name, counting only the matches', async () => {
    // Prepare
    const user = await newUser('filter');
    await createTeam({ token: user.token }, 'Alpha Squad');
    await createTeam({ token: user.token }, 'the alphabet crew');
    await createTeam({ token: user.token }, 'Beta');

    // Act
    const matches = await call(teams, 'GET', '/teams', { token: user.token, query: { name: 'ALPHA' } });
    const none = await call(teams, 'GET', '/teams', { token: user.token, query: { name: 'gamma' } });
    const empty = await call(teams, 'GET', '/teams', { token: user.token, query: { name: '' } });

    // Assess
    expect(matches.body.data.map((team: { name: string }) => team.name)).toEqual(['Alpha Squad', 'the alphabet crew']);
    expect(matches.body.meta.total).toBe(2);
    expect(none.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(empty.body.meta.total).toBe(3);
  });

  it('answers 400 for a limit or offset that is not a non-negative integer', async () => {
    // Prepare
    const user = await newUser('paging');

    // Act
    const negative = await call(teams, 'GET', '/teams', { token: user.token, query: { limit: '-1' } });
    const fraction = await call(teams, 'GET', '/teams', { token: user.token, query: { offset: '1.5' } });

    // Assess
    expect(negative.status).toBe(400);
    expect(negative.body.error.details[0].path).toBe('query.limit');
    expect(fraction.status).toBe(400);
  });

  it('is served under the /api/v1 alias too', async () => {
    // Prepare
    const user = await newUser('alias');
    await createTeam({ token: user.token }, 'Aliased');

    // Act
    const response = await call(teams, 'GET', '/v1/teams', { token: user.token });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.meta.total).toBe(1);
  });
});

describe('GET /teams/{id}', () => {
  it('answers 404 for an unknown team and 400 for an id that is not an integer', async () => {
    // Prepare
    const user = await newUser('lookup');

    // Act
    const missing = await call(teams, 'GET', '/teams/424242', { token: user.token });
    const invalid = await call(teams, 'GET', '/teams/abc', { token: user.token });

    // Assess
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'NOT_FOUND', message: 'Team not found', details: [] } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details[0].path).toBe('params.id');
  });
});

describe('PATCH /teams/{id}', () => {
  it('lets a team owner who is a plain organization member rename the team and clear its description', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.member), 'Old name', 'Old description');

    // Act
    const response = await call(teams, 'PATCH', `/teams/${team.id}`, {
      ...org.as(org.member),
      body: { name: 'New name', description: null },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id: team.id,
      name: 'New name',
      description: null,
      member_count: 1,
    });
    expectClean(response);
  });

  it('lets an organization admin outside the team change it, and keeps the name filter in step', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Before');

    // Act
    const response = await call(teams, 'PATCH', `/teams/${team.id}`, {
      ...org.as(org.orgAdmin),
      body: { name: 'Renamed' },
    });
    const found = await call(teams, 'GET', '/teams', { ...org.as(org.owner), query: { name: 'renamed' } });

    // Assess
    expect(response.status).toBe(200);
    expect(found.body.data.map((item: { id: number }) => item.id)).toEqual([team.id]);
  });

  it('answers 403 to team members not owner or admin, and to organization members outside the team', async () => {
    // Prepare
    const org = await organization();
    const bystander = await newUser('bystander');
    await joinOrganization(bystander, org.orgId);
    const team = await createTeam(org.as(org.owner), 'Guarded');
    await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: org.member.id, role: 'member' },
    });

    // Act
    const asTeamMember = await call(teams, 'PATCH', `/teams/${team.id}`, {
      ...org.as(org.member),
      body: { name: 'Hijacked' },
    });
    const asBystander = await call(teams, 'PATCH', `/teams/${team.id}`, {
      ...org.as(bystander),
      body: { name: 'Hijacked' },
    });

    // Assess
    expect(asTeamMember.status).toBe(403);
    expect(asBystander.status).toBe(403);
    expect(asBystander.body.error.code).toBe('FORBIDDEN');
  });

  it('answers 400 for an empty change or an invalid name, and 404 for an unknown team', async () => {
    // Prepare
    const user = await newUser('patcher');
    const team = await createTeam({ token: user.token });

    // Act
    const empty = await call(teams, 'PATCH', `/teams/${team.id}`, { token: user.token, body: {} });
    const tooLong = await call(teams, 'PATCH', `/teams/${team.id}`, {
      token: user.token,
      body: { name: 'y'.repeat(101) },
    });
    const missing = await call(teams, 'PATCH', '/teams/999', { token: user.token, body: { name: 'x' } });

    // Assess
    expect(empty.status).toBe(400);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details[0].path).toBe('body.name');
    expect(missing.status).toBe(404);
  });
});

describe('DELETE /teams/{id}', () => {
  it('answers 403 to a plain organization member, even one who owns the team', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.member), 'Mine');

    // Act
    const response = await call(teams, 'DELETE', `/teams/${team.id}`, org.as(org.member));
    const still = await call(teams, 'GET', `/teams/${team.id}`, org.as(org.member));

    // Assess
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('FORBIDDEN');
    expect(still.status).toBe(200);
  });

  it('lets an organization admin remove the team with its members and invites', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Doomed');
    await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: org.member.id },
    });
    const invitee = emailFor('doomed');
    await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: invitee },
    });
    const token = inviteTokenSentTo(invitee);

    // Act
    const response = await call(teams, 'DELETE', `/teams/${team.id}`, org.as(org.orgAdmin));
    const after = await call(teams, 'GET', `/teams/${team.id}`, org.as(org.owner));
    const listed = await call(teams, 'GET', '/teams', org.as(org.owner));
    const accept = await call(teams, 'POST', `/teams/invites/${token}/accept`, org.as(org.member));
    const again = await call(teams, 'DELETE', `/teams/${team.id}`, org.as(org.orgAdmin));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { id: team.id }, meta: { deleted: true } });
    expect(after.status).toBe(404);
    expect(listed.body.meta.total).toBe(0);
    expect(accept.status).toBe(404);
    expect(again.status).toBe(404);
    const left = await db.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :team)',
        ExpressionAttributeValues: { ':pk': tenantPk(org.orgId), ':team': 'TEAM' },
      }),
    );
    expect(left.Items).toEqual([]);
  });

  it('removes a team with more members than one transaction can hold', async () => {
    // Prepare
    const user = await newUser('bigteam');
    const team = await createTeam({ token: user.token }, 'Crowd');
    const extra = Array.from({ length: 230 }, (_, index) => 100_000 + index);
    for (let start = 0; start < extra.length; start += 25) {
      await db.send(
        new BatchWriteCommand({
          RequestItems: {
            [TABLE]: extra.slice(start, start + 25).map((userId) => ({
              PutRequest: {
                Item: {
                  ...identityKeys.teamMember(user.orgId, team.id, userId),
                  org_id: user.orgId,
                  team_id: team.id,
                  user_id: userId,
                  role: 'member',
                  joined_at: new Date().toISOString(),
                },
              },
            })),
          },
        }),
      );
    }

    // Act
    const response = await call(teams, 'DELETE', `/teams/${team.id}`, { token: user.token });

    // Assess
    expect(response.status).toBe(200);
    const left = await db.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :team)',
        ExpressionAttributeValues: { ':pk': tenantPk(user.orgId), ':team': 'TEAM' },
      }),
    );
    expect(left.Items).toEqual([]);
  });

  it('lets the organization owner delete a team and answers 404 for an unknown one', async () => {
    // Prepare
    const user = await newUser('deleter');
    const team = await createTeam({ token: user.token });

    // Act
    const response = await call(teams, 'DELETE', `/teams/${team.id}`, { token: user.token });
    const missing = await call(teams, 'DELETE', '/teams/777', { token: user.token });

    // Assess
    expect(response.status).toBe(200);
    expect(missing.status).toBe(404);
  });
});

describe('team members', () => {
  it('adds an organization member with the default role and keeps member_count in step', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Crew');

    // Act
    const added = await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: org.member.id },
    });
    const members = await call(teams, 'GET', `/teams/${team.id}/members`, org.as(org.member));
    const paged = await call(teams, 'GET', `/teams/${team.id}/members`, {
      ...org.as(org.member),
      query: { limit: '1', offset: '1' },
    });
    const fetched = await call(teams, 'GET', `/teams/${team.id}`, org.as(org.member));

    // Assess
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      data: {
        user_id: org.member.id,
        username: org.member.username,
        email: org.member.email,
        role: 'member',
        joined_at: expect.any(String),
      },
    });
    expect(members.body.data.map((member: { user_id: number; role: string }) => [member.user_id, member.role])).toEqual(
      [
        [org.owner.id, 'owner'],
        [org.member.id, 'member'],
      ],
    );
    expect(members.body.meta).toEqual({ total: 2, limit: 50, offset: 0 });
    expect(paged.body.data.map((member: { user_id: number }) => member.user_id)).toEqual([org.member.id]);
    expect(paged.body.meta).toEqual({ total: 2, limit: 1, offset: 1 });
    expect(fetched.body.data.member_count).toBe(2);
    expect(fetched.body.data.members).toHaveLength(2);
    expectClean(members);
  });

  it('answers 409 when the user is already in the team and leaves member_count alone', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Twice');
    await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: org.member.id },
    });

    // Act
    const again = await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: org.member.id, role: 'admin' },
    });
    const fetched = await call(teams, 'GET', `/teams/${team.id}`, org.as(org.owner));

    // Assess
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
    expect(fetched.body.data.member_count).toBe(2);
  });

  it('answers 404 for a user outside the organization or no user at all', async () => {
    // Prepare
    const org = await organization();
    const outsider = await newUser('outsider');
    const team = await createTeam(org.as(org.owner), 'Closed');

    // Act
    const foreign = await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: outsider.id },
    });
    const nobody = await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: 987654 },
    });
    const noTeam = await call(teams, 'POST', '/teams/5555/members', {
      ...org.as(org.owner),
      body: { user_id: org.member.id },
    });

    // Assess
    expect(foreign.status).toBe(404);
    expect(nobody.status).toBe(404);
    expect(noTeam.status).toBe(404);
  });

  it('answers 400 for a missing or non-integer user_id and an unknown role', async () => {
    // Prepare
    const user = await newUser('validator');
    const team = await createTeam({ token: user.token });
    const post = (body: unknown) => call(teams, 'POST', `/teams/${team.id}/members`, { token: user.token, body });

    // Act
    const missing = await post({ role: 'member' });
    const text = await post({ user_id: '12' });
    const fraction = await post({ user_id: 1.5 });
    const role = await post({ user_id: user.id, role: 'viewer' });

    // Assess
    expect([missing.status, text.status, fraction.status, role.status]).toEqual([400, 400, 400, 400]);
    expect(missing.body.error.details[0].path).toBe('body.user_id');
    expect(role.body.error.details[0].path).toBe('body.role');
  });

  it('lets team admins add members but keeps granting owner to team owners and organization admins', async () => {
    // Prepare
    const org = await organization();
    const teamAdmin = await newUser('teamadmin');
    const newcomer = await newUser('newcomer');
    await joinOrganization(teamAdmin, org.orgId);
    await joinOrganization(newcomer, org.orgId);
    const team = await createTeam(org.as(org.owner), 'Layered');
    await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: teamAdmin.id, role: 'admin' },
    });
    await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: org.member.id, role: 'member' },
    });

    // Act
    const byPlainMember = await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.member),
      body: { user_id: newcomer.id },
    });
    const ownerByTeamAdmin = await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(teamAdmin),
      body: { user_id: newcomer.id, role: 'owner' },
    });
    const memberByTeamAdmin = await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(teamAdmin),
      body: { user_id: newcomer.id, role: 'member' },
    });
    const ownerByOrgAdmin = await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.orgAdmin),
      body: { user_id: org.orgAdmin.id, role: 'owner' },
    });

    // Assess
    expect(byPlainMember.status).toBe(403);
    expect(ownerByTeamAdmin.status).toBe(403);
    expect(memberByTeamAdmin.status).toBe(201);
    expect(ownerByOrgAdmin.status).toBe(201);
    expect(ownerByOrgAdmin.body.data.role).toBe('owner');
  });
});

describe('team invites', () => {
  it('mails an invite link and answers the invite record without its token', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Invited');
    const invitee = emailFor('invitee');

    // Act
    const response = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: invitee, role: 'admin' },
    });
    const token = inviteTokenSentTo(invitee);
    const pending = await call(teams, 'GET', `/teams/${team.id}/invites`, org.as(org.owner));

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.any(String),
        email: invitee,
        role: 'admin',
        status: 'pending',
        expires_at: expect.any(String),
        created_at: expect.any(String),
        invited_by: org.owner.id,
      },
    });
    const { created_at, expires_at } = response.body.data;
    expect(Date.parse(expires_at) - Date.parse(created_at)).toBeGreaterThan(7 * 86_400_000 - 2_000);
    expect(Date.parse(expires_at) - Date.parse(created_at)).toBeLessThanOrEqual(7 * 86_400_000);
    expect(token.length).toBeGreaterThanOrEqual(43);
    expect(pending.body.data).toEqual([response.body.data]);
    expect(pending.body.meta).toEqual({ total: 1, limit: 50, offset: 0 });
    expectClean(response, token);
    expectClean(pending, token);
  });

  it('answers 409 while an invite for the same address is open, whatever its case', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Once');
    const invitee = emailFor('twice');
    await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: invitee },
    });

    // Act
    const again = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.orgAdmin),
      body: { email: invitee.toUpperCase() },
    });
    const concurrent = await Promise.all(
      [1, 2, 3].map(() =>
        call(teams, 'POST', `/teams/${team.id}/invites`, {
          ...org.as(org.owner),
          body: { email: `race-${invitee}` },
        }),
      ),
    );
    const pending = await call(teams, 'GET', `/teams/${team.id}/invites`, org.as(org.owner));

    // Assess
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({
      code: 'CONFLICT',
      message: 'An active invite for this email exists',
      details: [],
    });
    expect(concurrent.map((response) => response.status).sort()).toEqual([201, 409, 409]);
    expect(pending.body.meta.total).toBe(2);
  });

  it('answers 409 when the address belongs to a user already in the team', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Present');

    // Act
    const response = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: org.owner.email },
    });

    // Assess
    expect(response.status).toBe(409);
  });

  it('answers 400 for an invalid email or role and 404 for an unknown team', async () => {
    // Prepare
    const user = await newUser('inviter');
    const team = await createTeam({ token: user.token });

    // Act
    const badEmail = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      token: user.token,
      body: { email: 'not-an-email' },
    });
    const badRole = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      token: user.token,
      body: { email: emailFor('role'), role: 'viewer' },
    });
    const noTeam = await call(teams, 'POST', '/teams/31337/invites', {
      token: user.token,
      body: { email: emailFor('noteam') },
    });

    // Assess
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.error.details[0].path).toBe('body.email');
    expect(badRole.status).toBe(400);
    expect(noTeam.status).toBe(404);
  });

  it('answers 403 to team members who may not manage the team, for inviting and for listing invites', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Private');
    await call(teams, 'POST', `/teams/${team.id}/members`, {
      ...org.as(org.owner),
      body: { user_id: org.member.id },
    });

    // Act
    const invite = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.member),
      body: { email: emailFor('blocked') },
    });
    const list = await call(teams, 'GET', `/teams/${team.id}/invites`, org.as(org.member));

    // Assess
    expect(invite.status).toBe(403);
    expect(list.status).toBe(403);
  });

  it('withdraws the invite when its email cannot be sent, so that it blocks no later invite', async () => {
    // Prepare
    const user = await newUser('mailfail');
    const team = await createTeam({ token: user.token }, 'Unreachable');
    const invitee = emailFor('bounce');
    const failingMail: RequestContext = requestContext({
      traceId: 'test-trace',
      principal: {
        method: 'jwt',
        orgId: user.orgId,
        capability: 'write',
        userId: user.id,
        orgRole: 'owner',
        isInstanceAdmin: false,
        scopes: [],
        organization: { id: user.orgId, name: user.username, slug: user.username },
      },
      ports: wirePorts({
        clock: systemClock,
        email: { send: async () => Promise.reject(new Error('mail relay down')) },
      }),
      baseUrl: 'http://localhost/api',
    });

    // Act
    const failed = createTeamInvite(failingMail, team.id, { email: invitee, role: 'member' });
    await expect(failed).rejects.toThrow('mail relay down');
    const pending = await call(teams, 'GET', `/teams/${team.id}/invites`, { token: user.token });
    const retry = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      token: user.token,
      body: { email: invitee },
    });

    // Assess
    expect(pending.body.meta.total).toBe(0);
    expect(retry.status).toBe(201);
  });

  it('lets an organization member accept once: joins with the invite’s role, then 404', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Welcoming');
    await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: org.member.email, role: 'admin' },
    });
    const token = inviteTokenSentTo(org.member.email);

    // Act
    // The member's token acts in their personal organization: the invite names its own.
    const accepted = await call(teams, 'POST', `/teams/invites/${token}/accept`, { token: org.member.token });
    const twice = await call(teams, 'POST', `/teams/invites/${token}/accept`, { token: org.member.token });
    const fetched = await call(teams, 'GET', `/teams/${team.id}`, org.as(org.owner));
    const pending = await call(teams, 'GET', `/teams/${team.id}/invites`, org.as(org.owner));
    const reinvite = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: org.member.email },
    });

    // Assess
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toEqual({
      team: expect.objectContaining({ id: team.id, name: 'Welcoming', member_count: 2 }),
      member: {
        user_id: org.member.id,
        username: org.member.username,
        email: org.member.email,
        role: 'admin',
        joined_at: expect.any(String),
      },
    });
    expect(twice.status).toBe(404);
    expect(fetched.body.data.member_count).toBe(2);
    expect(fetched.body.data.members.map((member: { user_id: number }) => member.user_id)).toContain(org.member.id);
    expect(pending.body.meta.total).toBe(0);
    expect(reinvite.status).toBe(409);
    expectClean(accepted, token);
  });

  it('answers 404 to a caller outside the team’s organization and leaves the invite usable', async () => {
    // Prepare
    const org = await organization();
    const outsider = await newUser('stranger');
    const team = await createTeam(org.as(org.owner), 'Members only');
    const invitee = emailFor('forwarded');
    await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: invitee },
    });
    const token = inviteTokenSentTo(invitee);

    // Act
    const foreign = await call(teams, 'POST', `/teams/invites/${token}/accept`, { token: outsider.token });
    const member = await call(teams, 'POST', `/teams/invites/${token}/accept`, org.as(org.member));

    // Assess
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('NOT_FOUND');
    expect(member.status).toBe(200);
    expect(member.body.data.member.role).toBe('member');
  });

  it('answers 404 for an unknown token and for an expired invite, which then no longer blocks a new one', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Expiring');
    const invitee = emailFor('late');
    await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: invitee },
    });
    const token = inviteTokenSentTo(invitee);
    const past = Math.floor(Date.now() / 1000) - 60;
    // What seven days would do: the lookup and the guard pass their expiry (TTL removal lags behind).
    for (const Key of [teamKeys.inviteToken(sha256(token)), teamKeys.activeInvite(org.orgId, team.id, invitee)]) {
      await db.send(
        new UpdateCommand({
          TableName: TABLE,
          Key,
          UpdateExpression: 'SET expires_at = :past',
          ExpressionAttributeValues: { ':past': past },
        }),
      );
    }

    // Act
    const unknown = await call(teams, 'POST', '/teams/invites/no-such-token/accept', org.as(org.member));
    const expired = await call(teams, 'POST', `/teams/invites/${token}/accept`, org.as(org.member));
    const fresh = await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: invitee },
    });

    // Assess
    expect(unknown.status).toBe(404);
    expect(expired.status).toBe(404);
    expect(fresh.status).toBe(201);
  });

  it('answers 409 when the caller is already in the team and keeps the invite for later', async () => {
    // Prepare
    const org = await organization();
    const team = await createTeam(org.as(org.owner), 'Already');
    const invitee = emailFor('spare');
    await call(teams, 'POST', `/teams/${team.id}/invites`, {
      ...org.as(org.owner),
      body: { email: invitee },
    });
    const token = inviteTokenSentTo(invitee);

    // Act
    const response = await call(teams, 'POST', `/teams/invites/${token}/accept`, org.as(org.owner));
    const pending = await call(teams, 'GET', `/teams/${team.id}/invites`, org.as(org.owner));
    const fetched = await call(teams, 'GET', `/teams/${team.id}`, org.as(org.owner));

    // Assess
    expect(response.status).toBe(409);
    expect(pending.body.meta.total).toBe(1);
    expect(fetched.body.data.member_count).toBe(1);
  });
});

describe('tenant isolation', () => {
  it('hides another organization’s teams: 404 by id for every route and absent from lists', async () => {
    // Prepare
    const org = await organization();
    const outsider = await newUser('isolated');
    await createTeam(org.as(org.owner), 'Warm-up');
    const team = await createTeam(org.as(org.owner), 'Secret');
    // Team ids are per organization: the outsider's own team is number 1, theirs number 2 does not exist.
    await createTeam({ token: outsider.token }, 'Own team');
    const as = { token: outsider.token };

    // Act
    const responses = await Promise.all([
      call(teams, 'GET', `/teams/${team.id}`, as),
      call(teams, 'PATCH', `/teams/${team.id}`, { ...as, body: { name: 'Taken over' } }),
      call(teams, 'GET', `/teams/${team.id}/members`, as),
      call(teams, 'POST', `/teams/${team.id}/members`, { ...as, body: { user_id: outsider.id } }),
      call(teams, 'GET', `/teams/${team.id}/invites`, as),
      call(teams, 'POST', `/teams/${team.id}/invites`, { ...as, body: { email: emailFor('sneaky') } }),
    ]);
    const remove = await call(teams, 'DELETE', `/teams/${team.id}`, as);
    const filtered = await call(teams, 'GET', '/teams', { ...as, query: { name: 'secret' } });
    const ownList = await call(teams, 'GET', '/teams', as);
    const original = await call(teams, 'GET', `/teams/${team.id}`, org.as(org.owner));

    // Assess
    expect(team.id).toBe(2);
    expect(responses.map((response) => response.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(remove.status).toBe(404);
    expect(filtered.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(ownList.body.data.map((item: { name: string }) => item.name)).toEqual(['Own team']);
    expect(original.body.data).toMatchObject({ name: 'Secret', member_count: 1 });
  });

  it('answers 403 when the caller names an organization they do not belong to', async () => {
    // Prepare
    const org = await organization();
    const outsider = await newUser('trespasser');

    // Act
    const response = await call(teams, 'GET', '/teams', org.as(outsider));

    // Assess
    expect(response.status).toBe(403);
  });
});

describe('leaving an organization', () => {
  it('takes the user out of its teams when removed from the organization, and when erased', async () => {
    // Prepare: two users join the owner's organization and one of its teams.
    const { handler: organizations } = await import('#functions/http/organizations');
    const { handler: usersHandler } = await import('#functions/http/users');
    const owner = await newUser('teamowner');
    const removed = await newUser('removed');
    const erased = await newUser('erased');
    for (const user of [removed, erased]) {
      const added = await call(organizations, 'POST', `/organizations/${owner.orgId}/members`, {
        token: owner.token,
        body: { user_id: String(user.id), role: 'member' },
      });
      expect(added.status).toBe(201);
    }
    const team = await call(teams, 'POST', '/teams', { token: owner.token, body: { name: 'Leavers' } });
    const teamId = team.body.data.id as number;
    for (const user of [removed, erased]) {
      await call(teams, 'POST', `/teams/${teamId}/members`, {
        token: owner.token,
        body: { user_id: user.id },
      });
    }

    // Act
    await call(organizations, 'DELETE', `/organizations/${owner.orgId}/members/${removed.id}`, {
      token: owner.token,
    });
    await call(usersHandler, 'DELETE', '/users/me', { token: erased.token });

    // Assess
    const after = await call(teams, 'GET', `/teams/${teamId}`, { token: owner.token });
    expect(after.body.data.member_count).toBe(1);
    expect(after.body.data.members.map((member: { user_id: number }) => member.user_id)).toEqual([owner.id]);
  });
});
