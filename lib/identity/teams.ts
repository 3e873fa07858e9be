import type { Principal, RequestContext } from '#lib/context';
import { randomBase62, randomToken, sha256 } from '#lib/crypto/secrets';
import { counterKey, nextId } from '#lib/db/counters';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { isConditionFailed, table } from '#lib/db/table';
import { itemExists, itemIsNew, transact } from '#lib/db/transactions';
import { ConflictError, ForbiddenError, NotFoundError } from '#lib/errors';
import { requireOrgRole, requirePrincipal, requireUser } from '#lib/identity/access';
import { epochSeconds, identityKeys } from '#lib/identity/keys';
import { getMembership } from '#lib/identity/memberships';
import type { TeamRole } from '#lib/identity/roles';
import { getUserItem, getUsersByIds, type UserItem, userIdByEmail } from '#lib/identity/users';

/**
 * Teams of an organization, their members and their invites. Everything lives under the tenant of the
 * organization the request acts in (`T#<org>`), so a team of another organization is simply not found.
 *
 * Besides the keys in lib/identity/keys:
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | invite token lookup | `TEAMINVITETOKEN#<sha256>` | `TEAMINVITETOKEN` | TTL; the raw token is never stored |
 * | active invite guard | `T#<org>` | `TEAMINVITEACTIVE#<pad team>#<email lowercased>` | TTL; one open invite per email |
 */
export const teamKeys = {
  inviteToken: (tokenHash: string): TableKey => ({
    pk: `TEAMINVITETOKEN#${tokenHash}`,
    sk: 'TEAMINVITETOKEN',
  }),
  activeInvite: (orgId: string, teamId: number, email: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `TEAMINVITEACTIVE#${pad(teamId)}#${email.toLowerCase()}`,
  }),
  teamsPrefix: 'TEAM#',
  membersPrefix: (teamId: number) => `TEAMMEMBER#${pad(teamId)}#`,
  invitesPrefix: (teamId: number) => `TEAMINVITE#${pad(teamId)}#`,
};

/** How long an emailed invite can be accepted. */
export const TEAM_INVITE_TTL_DAYS = 7;

export interface TeamItem {
  pk: string;
  sk: string;
  id: number;
  org_id: string;
  name: string;
  /** Lowercased name, so that the list filter can match case-insensitively inside DynamoDB. */
  name_lower: string;
  description: string | null;
  member_count: number;
  created_at: string;
  updated_at: string;
  created_by: number | null;
  /** Set when a deletion has started; the team is gone for everyone from then on. */
  deleting_at?: string;
}

export interface TeamMemberItem {
  pk: string;
  sk: string;
  org_id: string;
  team_id: number;
  user_id: number;
  role: TeamRole;
  joined_at: string;
}

export interface TeamInviteItem {
  pk: string;
  sk: string;
  id: string;
  org_id: string;
  team_id: number;
  email: string;
  role: TeamRole;
  status: 'pending' | 'accepted';
  /** ISO time; `expires_at` is kept for the table's numeric TTL attribute on the lookup and guard. */
  valid_until: string;
  /** Back-reference to the lookup item so that a team deletion can remove it; not the token. */
  token_hash: string;
  created_at: string;
  invited_by: number | null;
  accepted_at?: string;
  accepted_by?: number;
}

interface InviteTokenItem {
  pk: string;
  sk: string;
  org_id: string;
  team_id: number;
  invite_id: string;
  expires_at: number;
}

export interface Team {
  id: number;
  name: string;
  description: string | null;
  member_count: number;
  created_at: string;
  updated_at: string;
  created_by: number | null;
}

export interface TeamMember {
  user_id: number;
  /** Null when the user's account has been erased since joining. */
  username: string | null;
  email: string | null;
  role: TeamRole;
  joined_at: string;
}

export type TeamInviteStatus = 'pending' | 'accepted' | 'expired';

export interface TeamInvite {
  id: string;
  email: string;
  role: TeamRole;
  status: TeamInviteStatus;
  expires_at: string;
  created_at: string;
  invited_by: number | null;
}

export const toTeam = (item: TeamItem): Team => ({
  id: item.id,
  name: item.name,
  description: item.description ?? null,
  member_count: item.member_count,
  created_at: item.created_at,
  updated_at: item.updated_at,
  created_by: item.created_by ?? null,
});

export const toTeamMember = (item: TeamMemberItem, user: UserItem | undefined): TeamMember => ({
  user_id: item.user_id,
  username: user?.username ?? null,
  email: user?.email ?? null,
  role: item.role,
  joined_at: item.joined_at,
});

export const toTeamInvite = (item: TeamInviteItem, now: Date): TeamInvite => ({
  id: item.id,
  email: item.email,
  role: item.role,
  status: item.status === 'pending' && new Date(item.valid_until) <= now ? 'expired' : item.status,
  expires_at: item.valid_until,
  created_at: item.created_at,
  invited_by: item.invited_by ?? null,
});

/** A team that exists and is not being deleted: every write that adds to a team checks this. */
const teamLive = 'attribute_exists(pk) AND attribute_not_exists(deleting_at)';
/** An open invite's guard may be taken over only once its invite has expired (TTL removal lags). */
const noOpenInvite = 'attribute_not_exists(pk) OR expires_at <= :now';
const stillValid = 'attribute_exists(pk) AND expires_at > :now';
const stillPending = '#status = :pending';

const teamNotFound = () => new NotFoundError('Team not found');
const inviteNotFound = () => new NotFoundError('Invite not found, expired or already used');
const alreadyMember = () => new ConflictError('The user is already a member of this team');
const userNotInOrganization = () => new NotFoundError('User not found in this organization');

const DAY_SECONDS = 86_400;
const EVERYTHING: PageRequest = { limit: Number.POSITIVE_INFINITY, offset: 0 };
/** TransactWriteItems takes at most 100 items. */
const TRANSACTION_LIMIT = 100;

async function getTeamItem(orgId: string, teamId: number): Promise<TeamItem | undefined> {
  const result = await table.get({ Key: identityKeys.team(orgId, teamId), ConsistentRead: true });
  return result.Item as TeamItem | undefined;
}

/** The team, or 404 when it does not exist in this organization or its deletion has begun. */
async function getLiveTeam(orgId: string, teamId: number): Promise<TeamItem> {
  const team = await getTeamItem(orgId, teamId);
  if (!team || team.deleting_at) throw teamNotFound();
  return team;
}

async function getTeamMemberItem(
  orgId: string,
  teamId: number,
  userId: number,
): Promise<TeamMemberItem | undefined> {
  const result = await table.get({
    Key: identityKeys.teamMember(orgId, teamId, userId),
    ConsistentRead: true,
  });
  return result.Item as TeamMemberItem | undefined;
}

/** Whether the caller is an admin (or owner) of the active organization, by the one rule in access.ts. */
function isOrgAdmin(ctx: RequestContext): boolean {
  try {
    requireOrgRole(ctx, 'admin');
    return true;
  } catch (error) {
    if (error instanceof ForbiddenError) return false;
    throw error;
  }
}

/**
 * Changing a team (its fields, members, invites) is for the team's owners and admins and for admins of
 * the organization. Handing out the owner role is kept to team owners and organization admins, so that
 * a team admin cannot raise someone (or a second account) above themselves.
 */
async function requireTeamManager(
  ctx: RequestContext,
  principal: Principal,
  team: TeamItem,
  grantsOwner = false,
): Promise<void> {
  if (isOrgAdmin(ctx)) return;
  const own =
    principal.userId === undefined
      ? undefined
      : await getTeamMemberItem(principal.orgId, team.id, principal.userId);
  if (grantsOwner && own?.role !== 'owner') {
    throw new ForbiddenError(
      'Granting the owner role needs the team owner role or the organization admin role',
    );
  }
  if (own?.role !== 'owner' && own?.role !== 'admin') {
    throw new ForbiddenError('This needs the team owner or admin role, or the organization admin role');
  }
}

async function membersWithUsers(items: TeamMemberItem[]): Promise<TeamMember[]> {
  const users = await getUsersByIds([...new Set(items.map((item) => item.user_id))]);
  const byId = new Map(users.map((user) => [user.id, user]));
  return items.map((item) => toTeamMember(item, byId.get(item.user_id)));
}

function teamMemberQuery(orgId: string, teamId: number) {
  return {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': teamKeys.membersPrefix(teamId) },
  };
}

function teamInviteQuery(orgId: string, teamId: number) {
  return {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': teamKeys.invitesPrefix(teamId) },
  };
}

export interface TeamListRequest extends PageRequest {
  name?: string | undefined;
}

/** GET /teams: the active organization's teams, oldest first, optionally filtered by name. */
export async function listTeams(ctx: RequestContext, request: TeamListRequest): Promise<Page<Team>> {
  const principal = requirePrincipal(ctx);
  const name = request.name?.trim().toLowerCase();
  const values: Record<string, unknown> = {
    ':pk': tenantPk(principal.orgId),
    ':prefix': teamKeys.teamsPrefix,
  };
  const filters = ['attribute_not_exists(deleting_at)'];
  if (name) {
    filters.push('contains(name_lower, :name)');
    values[':name'] = name;
  }
  const page = await queryPage<TeamItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: filters.join(' AND '),
      ExpressionAttributeValues: values,
    },
    request,
  );
  return { items: page.items.map(toTeam), total: page.total };
}

export interface NewTeam {
  name: string;
  description?: string | null | undefined;
}

/** POST /teams: the creator becomes the team's first owner, in the same transaction as the team. */
export async function createTeam(ctx: RequestContext, input: NewTeam): Promise<Team> {
  const principal = requireUser(ctx);
  const orgId = principal.orgId;
  const id = await nextId(counterKey('teams', tenantPk(orgId)));
  const now = ctx.clock.now().toISOString();
  const team: TeamItem = {
    ...identityKeys.team(orgId, id),
    id,
    org_id: orgId,
    name: input.name,
    name_lower: input.name.toLowerCase(),
    description: input.description ?? null,
    member_count: 1,
    created_at: now,
    updated_at: now,
    created_by: principal.userId,
  };
  const owner: TeamMemberItem = {
    ...identityKeys.teamMember(orgId, id, principal.userId),
    org_id: orgId,
    team_id: id,
    user_id: principal.userId,
    role: 'owner',
    joined_at: now,
  };
  await transact([
    { Put: { Item: team, ConditionExpression: itemIsNew } },
    { Put: { Item: owner, ConditionExpression: itemIsNew } },
  ]);
  return toTeam(team);
}

/** GET /teams/{id}: the team with all its members. */
export async function getTeamWithMembers(
  ctx: RequestContext,
  teamId: number,
): Promise<Team & { members: TeamMember[] }> {
  const principal = requirePrincipal(ctx);
  const team = await getLiveTeam(principal.orgId, teamId);
  const members = await queryPage<TeamMemberItem>(teamMemberQuery(principal.orgId, teamId), EVERYTHING);
  return { ...toTeam(team), members: await membersWithUsers(members.items) };
}

export interface TeamChanges {
  name?: string | undefined;
  description?: string | null | undefined;
}

/** PATCH /teams/{id}: team owners and admins, organization admins. */
export async function updateTeam(ctx: RequestContext, teamId: number, changes: TeamChanges): Promise<Team> {
  const principal = requirePrincipal(ctx);
  const team = await getLiveTeam(principal.orgId, teamId);
  await requireTeamManager(ctx, principal, team);
  const now = ctx.clock.now().toISOString();
  const sets = ['updated_at = :now'];
  const values: Record<string, unknown> = { ':now': now };
  if (changes.name !== undefined) {
    sets.push('#name = :name', 'name_lower = :nameLower');
    values[':name'] = changes.name;
    values[':nameLower'] = changes.name.toLowerCase();
  }
  if (changes.description !== undefined) {
    sets.push('description = :description');
    values[':description'] = changes.description;
  }
  try {
    const result = await table.update({
      Key: identityKeys.team(principal.orgId, teamId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: teamLive,
      ...(changes.name !== undefined ? { ExpressionAttributeNames: { '#name': 'name' } } : {}),
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    });
    return toTeam(result.Attributes as TeamItem);
  } catch (error) {
    if (isConditionFailed(error)) throw teamNotFound();
    throw error;
  }
}

/**
 * DELETE /teams/{id}: organization admins and owners. A team can outgrow one transaction (100 items),
 * so the deletion first marks the team: from then on it answers 404 and refuses new members and
 * invites, so the children read next are all there will be. They are deleted in transactions, the last
 * one taking the team record with it; a deletion that fails halfway is finished by calling DELETE again.
 */
export async function deleteTeam(ctx: RequestContext, teamId: number): Promise<{ id: number }> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const team = await getTeamItem(orgId, teamId);
  if (!team) throw teamNotFound();
  requireOrgRole(ctx, 'admin');
  if (!team.deleting_at) {
    try {
      await table.update({
        Key: identityKeys.team(orgId, teamId),
        UpdateExpression: 'SET deleting_at = :now',
        ConditionExpression: itemExists,
        ExpressionAttributeValues: { ':now': ctx.clock.now().toISOString() },
      });
    } catch (error) {
      if (isConditionFailed(error)) throw teamNotFound();
      throw error;
    }
  }
  const [members, invites] = await Promise.all([
    queryPage<TableKey>(
      { ...teamMemberQuery(orgId, teamId), ConsistentRead: true, ProjectionExpression: 'pk, sk' },
      EVERYTHING,
    ),
    queryPage<Pick<TeamInviteItem, 'pk' | 'sk' | 'email' | 'token_hash' | 'status'>>(
      {
        ...teamInviteQuery(orgId, teamId),
        ConsistentRead: true,
        ProjectionExpression: 'pk, sk, email, token_hash, #status',
        ExpressionAttributeNames: { '#status': 'status' },
      },
      EVERYTHING,
    ),
  ]);
  // Two invites to one address share a guard, and a transaction may touch an item only once.
  const keys = new Map<string, TableKey>();
  const add = (key: TableKey) => keys.set(`${key.pk}|${key.sk}`, { pk: key.pk, sk: key.sk });
  for (const member of members.items) add(member);
  for (const invite of invites.items) {
    add(invite);
    if (invite.status === 'pending') {
      add(teamKeys.inviteToken(invite.token_hash));
      add(teamKeys.activeInvite(orgId, teamId, invite.email));
    }
  }
  const deletes = [...keys.values()].map((Key) => ({ Delete: { Key } }));
  // The last transaction carries the team record and as many children as fit beside it.
  const tailStart = Math.max(0, deletes.length - (TRANSACTION_LIMIT - 1));
  for (let start = 0; start < tailStart; start += TRANSACTION_LIMIT) {
    await transact(deletes.slice(start, Math.min(start + TRANSACTION_LIMIT, tailStart)));
  }
  const tail = deletes.slice(tailStart);
  await transact(
    [
      ...tail,
      {
        Delete: {
          Key: identityKeys.team(orgId, teamId),
          ConditionExpression: itemExists,
        },
      },
    ],
    { [tail.length]: teamNotFound },
  );
  return { id: teamId };
}

/** GET /teams/{id}/members. */
export async function listTeamMembers(
  ctx: RequestContext,
  teamId: number,
  page: PageRequest,
): Promise<Page<TeamMember>> {
  const principal = requirePrincipal(ctx);
  await getLiveTeam(principal.orgId, teamId);
  const result = await queryPage<TeamMemberItem>(teamMemberQuery(principal.orgId, teamId), page);
  return { items: await membersWithUsers(result.items), total: result.total };
}

export interface NewTeamMember {
  user_id: number;
  role: TeamRole;
}

/**
 * POST /teams/{id}/members: the user must belong to the organization. The membership, the member and
 * the team's member_count change in one transaction, so the count never drifts from the members.
 */
export async function addTeamMember(
  ctx: RequestContext,
  teamId: number,
  input: NewTeamMember,
): Promise<TeamMember> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const team = await getLiveTeam(orgId, teamId);
  await requireTeamManager(ctx, principal, team, input.role === 'owner');
  const [user, membership] = await Promise.all([
    getUserItem(input.user_id),
    getMembership(orgId, input.user_id),
  ]);
  if (!user || !membership) throw userNotInOrganization();
  const member: TeamMemberItem = {
    ...identityKeys.teamMember(orgId, teamId, input.user_id),
    org_id: orgId,
    team_id: teamId,
    user_id: input.user_id,
    role: input.role,
    joined_at: ctx.clock.now().toISOString(),
  };
  await transact(
    [
      {
        ConditionCheck: {
          Key: identityKeys.membership(orgId, input.user_id),
          ConditionExpression: itemExists,
        },
      },
      { Put: { Item: member, ConditionExpression: itemIsNew } },
      {
        Update: {
          Key: identityKeys.team(orgId, teamId),
          UpdateExpression: 'ADD member_count :one',
          ConditionExpression: teamLive,
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ],
    { 0: userNotInOrganization, 1: alreadyMember, 2: teamNotFound },
  );
  return toTeamMember(member, user);
}

/** GET /teams/{id}/invites: invites still waiting for an answer; for those who may invite. */
export async function listTeamInvites(
  ctx: RequestContext,
  teamId: number,
  page: PageRequest,
): Promise<Page<TeamInvite>> {
  const principal = requirePrincipal(ctx);
  const team = await getLiveTeam(principal.orgId, teamId);
  await requireTeamManager(ctx, principal, team);
  const now = ctx.clock.now();
  const query = teamInviteQuery(principal.orgId, teamId);
  const result = await queryPage<TeamInviteItem>(
    {
      ...query,
      FilterExpression: '#status = :pending AND valid_until > :now',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ...query.ExpressionAttributeValues,
        ':pending': 'pending',
        ':now': now.toISOString(),
      },
    },
    page,
  );
  return { items: result.items.map((item) => toTeamInvite(item, now)), total: result.total };
}

export interface NewTeamInvite {
  email: string;
  role: TeamRole;
}

/**
 * POST /teams/{id}/invites. One open invite per address and team is enforced by a guard item written
 * in the same transaction as the invite (two concurrent invites cannot both pass a read). The token is
 * sent by email and stored only as its SHA-256 lookup item; if the email cannot be sent, the invite is
 * withdrawn again, since nobody could ever use it and it would block a new one for a week.
 */
export async function createTeamInvite(
  ctx: RequestContext,
  teamId: number,
  input: NewTeamInvite,
): Promise<TeamInvite> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const team = await getLiveTeam(orgId, teamId);
  await requireTeamManager(ctx, principal, team, input.role === 'owner');
  const existingUserId = await userIdByEmail(input.email);
  if (existingUserId !== undefined && (await getTeamMemberItem(orgId, teamId, existingUserId))) {
    throw alreadyMember();
  }
  const token = randomToken(32);
  const tokenHash = sha256(token);
  const now = ctx.clock.now();
  const expiresAt = epochSeconds(now) + TEAM_INVITE_TTL_DAYS * DAY_SECONDS;
  const inviteId = `tinv_${randomBase62(16)}`;
  const invite: TeamInviteItem = {
    ...identityKeys.teamInvite(orgId, teamId, inviteId),
    id: inviteId,
    org_id: orgId,
    team_id: teamId,
    email: input.email,
    role: input.role,
    status: 'pending',
    valid_until: new Date(expiresAt * 1000).toISOString(),
    token_hash: tokenHash,
    created_at: now.toISOString(),
    invited_by: principal.userId ?? null,
  };
  const lookup: InviteTokenItem = {
    ...teamKeys.inviteToken(tokenHash),
    org_id: orgId,
    team_id: teamId,
    invite_id: inviteId,
    expires_at: expiresAt,
  };
  const guardKey = teamKeys.activeInvite(orgId, teamId, input.email);
  await transact(
    [
      {
        Put: {
          Item: { ...guardKey, invite_id: inviteId, expires_at: expiresAt },
          ConditionExpression: noOpenInvite,
          ExpressionAttributeValues: { ':now': epochSeconds(now) },
        },
      },
      { Put: { Item: invite, ConditionExpression: itemIsNew } },
      { Put: { Item: lookup, ConditionExpression: itemIsNew } },
      {
        ConditionCheck: {
          Key: identityKeys.team(orgId, teamId),
          ConditionExpression: teamLive,
        },
      },
    ],
    {
      0: () => new ConflictError('An active invite for this email exists'),
      3: teamNotFound,
    },
  );
  try {
    await ctx.email.send({
      to: input.email,
      subject: `You are invited to join the team ${team.name}`,
      text: [
        `You have been invited to join the team "${team.name}" as ${input.role}.`,
        '',
        'To accept, send an authenticated POST request (as a member of the organization) to:',
        `${ctx.baseUrl}/teams/invites/${token}/accept`,
        '',
        `The invite expires on ${invite.valid_until}.`,
      ].join('\n'),
    });
  } catch (error) {
    await transact([
      { Delete: { Key: guardKey } },
      { Delete: { Key: identityKeys.teamInvite(orgId, teamId, inviteId) } },
      { Delete: { Key: teamKeys.inviteToken(tokenHash) } },
    ]);
    throw error;
  }
  return toTeamInvite(invite, now);
}

/**
 * POST /teams/invites/{token}/accept. The caller joins the team with the invite's role. Consuming the
 * lookup item (conditionally, while unexpired) is part of the joining transaction, so an invite is used
 * at most once even by concurrent requests. Every reason an invite cannot be used answers the same 404,
 * including a caller outside the team's organization, who learns nothing about it.
 */
export async function acceptTeamInvite(
  ctx: RequestContext,
  token: string,
): Promise<{ team: Team; member: TeamMember }> {
  const principal = requireUser(ctx);
  const now = ctx.clock.now();
  const nowSeconds = epochSeconds(now);
  const tokenHash = sha256(token);
  const found = await table.get({ Key: teamKeys.inviteToken(tokenHash), ConsistentRead: true });
  const lookup = found.Item as InviteTokenItem | undefined;
  if (!lookup || lookup.expires_at <= nowSeconds) throw inviteNotFound();
  const { org_id: orgId, team_id: teamId, invite_id: inviteId } = lookup;
  const [membership, team, inviteResult] = await Promise.all([
    getMembership(orgId, principal.userId),
    getTeamItem(orgId, teamId),
    table.get({
      Key: identityKeys.teamInvite(orgId, teamId, inviteId),
      ConsistentRead: true,
    }),
  ]);
  const invite = inviteResult.Item as TeamInviteItem | undefined;
  if (!membership || !team || team.deleting_at || !invite || invite.status !== 'pending') {
    throw inviteNotFound();
  }
  if (await getTeamMemberItem(orgId, teamId, principal.userId)) throw alreadyMember();
  const member: TeamMemberItem = {
    ...identityKeys.teamMember(orgId, teamId, principal.userId),
    org_id: orgId,
    team_id: teamId,
    user_id: principal.userId,
    role: invite.role,
    joined_at: now.toISOString(),
  };
  await transact(
    [
      {
        Delete: {
          Key: teamKeys.inviteToken(tokenHash),
          ConditionExpression: stillValid,
          ExpressionAttributeValues: { ':now': nowSeconds },
        },
      },
      {
        Update: {
          Key: identityKeys.teamInvite(orgId, teamId, inviteId),
          UpdateExpression: 'SET #status = :accepted, accepted_at = :at, accepted_by = :user',
          ConditionExpression: stillPending,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pending': 'pending',
            ':accepted': 'accepted',
            ':at': now.toISOString(),
            ':user': principal.userId,
          },
        },
      },
      // The guard is this invite's: another could take it over only after this one expired.
      { Delete: { Key: teamKeys.activeInvite(orgId, teamId, invite.email) } },
      {
        ConditionCheck: {
          Key: identityKeys.membership(orgId, principal.userId),
          ConditionExpression: itemExists,
        },
      },
      { Put: { Item: member, ConditionExpression: itemIsNew } },
      {
        Update: {
          Key: identityKeys.team(orgId, teamId),
          UpdateExpression: 'ADD member_count :one',
          ConditionExpression: teamLive,
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ],
    { 0: inviteNotFound, 1: inviteNotFound, 3: inviteNotFound, 4: alreadyMember, 5: inviteNotFound },
  );
  const [joined, user] = await Promise.all([getTeamItem(orgId, teamId), getUserItem(principal.userId)]);
  return {
    team: toTeam(joined ?? { ...team, member_count: team.member_count + 1 }),
    member: toTeamMember(member, user),
  };
}
