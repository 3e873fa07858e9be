import { allOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { isMemberCheck } from '#lib/identity/memberships';
import type { TeamRole } from '#lib/identity/roles';
import type { UserItem } from '#lib/identity/users';

const TEAM_PREFIX = 'TEAM#';
const MEMBER_PREFIX = 'TEAMMEMBER#';
const INVITE_PREFIX = 'TEAMINVITE#';

/**
 * Teams of an organization, their members and their invites, as stored. All but the token lookups live
 * in the organization's partition, so a team of another organization is simply not found.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | team | `T#<org>` | `TEAM#<pad id>` | `member_count` changes with every member write |
 * | team member | `T#<org>` | `TEAMMEMBER#<pad team>#<pad user>` | |
 * | team invite | `T#<org>` | `TEAMINVITE#<pad team>#<id>` | `token_hash` finds its lookup when the team goes |
 * | invite token lookup | `TEAMINVITETOKEN#<sha256>` | `TEAMINVITETOKEN` | TTL; the raw token is never stored |
 * | active invite guard | `T#<org>` | `TEAMINVITEACTIVE#<pad team>#<email lowercased>` | TTL; one per email |
 * | id counter | `T#<org>` | `COUNTER#teams` | |
 *
 * Reasons a team write is refused with: `team-missing` (absent, or its deletion has begun),
 * `already-team-member`, `team-invite-active` (the address has an open invite), `team-invite-used`
 * (accepted or expired meanwhile), `team-exists` and `team-invite-exists` (a new id is in use), and,
 * from the organization membership check, `not-member`.
 */
export const teamKeys = {
  byId: (orgId: string, teamId: number): TableKey => ({
    pk: tenantPk(orgId),
    sk: `${TEAM_PREFIX}${pad(teamId)}`,
  }),
  member: (orgId: string, teamId: number, userId: number): TableKey => ({
    pk: tenantPk(orgId),
    sk: `${MEMBER_PREFIX}${pad(teamId)}#${pad(userId)}`,
  }),
  invite: (orgId: string, teamId: number, inviteId: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `${INVITE_PREFIX}${pad(teamId)}#${inviteId}`,
  }),
  inviteToken: (tokenHash: string): TableKey => ({
    pk: `TEAMINVITETOKEN#${tokenHash}`,
    sk: 'TEAMINVITETOKEN',
  }),
  activeInvite: (orgId: string, teamId: number, email: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `TEAMINVITEACTIVE#${pad(teamId)}#${email.toLowerCase()}`,
  }),
  membersPrefix: (teamId: number): string => `${MEMBER_PREFIX}${pad(teamId)}#`,
  invitesPrefix: (teamId: number): string => `${INVITE_PREFIX}${pad(teamId)}#`,
  counter: (orgId: string): TableKey => counterKey('teams', tenantPk(orgId)),
};

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

export type Team = Omit<TeamItem, 'pk' | 'sk' | 'org_id' | 'name_lower' | 'deleting_at'>;

export type TeamMember = Pick<TeamMemberItem, 'user_id' | 'role' | 'joined_at'> & {
  /** Null when the user's account has been erased since joining. */
  username: string | null;
  email: string | null;
};

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

const notDeleting = 'attribute_not_exists(deleting_at)';
/** A team that exists and is not being deleted: every write that adds to a team checks this. */
const teamLive = allOf(itemExists, notDeleting);
const countMembers = 'ADD member_count :delta';

const everything: PageRequest = { limit: Number.POSITIVE_INFINITY, offset: 0 };
const inPartition = 'pk = :pk AND begins_with(sk, :prefix)';
/** The Query of one key range of the organization's partition. */
export const teamRange = (orgId: string, prefix: string) => ({
  KeyConditionExpression: inPartition,
  ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix },
});

export const nextTeamId = (orgId: string): Promise<number> => nextId(teamKeys.counter(orgId));

/** A team as stored, deleting or not, read strongly. */
export async function getTeamItem(orgId: string, teamId: number): Promise<TeamItem | undefined> {
  const result = await table.get({ Key: teamKeys.byId(orgId, teamId), ConsistentRead: true });
  return result.Item as TeamItem | undefined;
}

export async function getTeamMember(
  orgId: string,
  teamId: number,
  userId: number,
): Promise<TeamMemberItem | undefined> {
  const result = await table.get({ Key: teamKeys.member(orgId, teamId, userId), ConsistentRead: true });
  return result.Item as TeamMemberItem | undefined;
}

/** The organization's teams that are not being deleted, oldest first, optionally by part of the name. */
export async function listTeamsOfOrganization(input: {
  orgId: string;
  name?: string | undefined;
  limit: number;
  offset: number;
}): Promise<Page<TeamItem>> {
  const query = teamRange(input.orgId, TEAM_PREFIX);
  const name = input.name?.trim().toLowerCase();
  return queryPage<TeamItem>(
    name
      ? {
          ...query,
          FilterExpression: `${notDeleting} AND contains(name_lower, :name)`,
          ExpressionAttributeValues: { ...query.ExpressionAttributeValues, ':name': name },
        }
      : { ...query, FilterExpression: notDeleting },
    { limit: input.limit, offset: input.offset },
  );
}

/** A team's members by user id; without `limit`, all of them. */
export async function listMembersOfTeam(input: {
  orgId: string;
  teamId: number;
  limit?: number;
  offset?: number;
}): Promise<Page<TeamMemberItem>> {
  return queryPage<TeamMemberItem>(teamRange(input.orgId, teamKeys.membersPrefix(input.teamId)), {
    limit: input.limit ?? everything.limit,
    offset: input.offset ?? everything.offset,
  });
}

export interface TeamChanges {
  name?: string | undefined;
  description?: string | null | undefined;
}

/** Changes a live team's name or description; answers the team as it now is (`team-missing`). */
export async function updateTeamFields(input: {
  orgId: string;
  teamId: number;
  changes: TeamChanges;
  now: string;
}): Promise<TeamItem> {
  const { changes } = input;
  const sets = ['updated_at = :now'];
  const values: Record<string, unknown> = { ':now': input.now };
  if (changes.name !== undefined) {
    sets.push('#name = :name', 'name_lower = :nameLower');
    values[':name'] = changes.name;
    values[':nameLower'] = changes.name.toLowerCase();
  }
  if (changes.description !== undefined) {
    sets.push('description = :description');
    values[':description'] = changes.description;
  }
  const result = await table.update({
    Key: teamKeys.byId(input.orgId, input.teamId),
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: teamLive,
    ...(changes.name !== undefined ? { ExpressionAttributeNames: { '#name': 'name' } } : {}),
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
    reason: 'team-missing',
  });
  return result.Attributes as TeamItem;
}

/** Marks a team as being deleted: from then on it is not found and takes no new members or invites. */
export async function markTeamDeleting(orgId: string, teamId: number, now: string): Promise<void> {
  await table.update({
    Key: teamKeys.byId(orgId, teamId),
    UpdateExpression: 'SET deleting_at = :now',
    ConditionExpression: itemExists,
    ExpressionAttributeValues: { ':now': now },
    reason: 'team-missing',
  });
}

/**
 * The keys of everything a team holds: its members, its invites and, for each pending invite, the token
 * lookup and the address's guard. Read strongly, once the team is marked, so that nothing is missed.
 */
export async function teamContentKeys(orgId: string, teamId: number): Promise<TableKey[]> {
  type InviteKeys = TableKey & { email: string; token_hash: string; status: string };
  const [members, invites] = await Promise.all([
    queryPage<TableKey>(
      {
        ...teamRange(orgId, teamKeys.membersPrefix(teamId)),
        ConsistentRead: true,
        ProjectionExpression: 'pk, sk',
      },
      everything,
    ),
    queryPage<InviteKeys>(
      {
        ...teamRange(orgId, teamKeys.invitesPrefix(teamId)),
        ConsistentRead: true,
        ProjectionExpression: 'pk, sk, email, token_hash, #status',
        ExpressionAttributeNames: { '#status': 'status' },
      },
      everything,
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
  return [...keys.values()];
}

/** Deletes the team record itself, the last write of a deletion (`team-missing`). */
export const teamDeletionWrite = (orgId: string, teamId: number): TransactItem => ({
  Delete: { Key: teamKeys.byId(orgId, teamId), ConditionExpression: itemExists },
  reason: 'team-missing',
});

/** The writes that create a team with its first owner. */
export const newTeamWrites = (team: TeamItem, owner: TeamMemberItem): TransactItem[] => [
  { Put: { Item: team, ConditionExpression: itemIsNew }, reason: 'team-exists' },
  { Put: { Item: owner, ConditionExpression: itemIsNew }, reason: 'already-team-member' },
];

/** For another record's transaction: the team must be live (`team-missing`). */
export const teamLiveCheck = (orgId: string, teamId: number): TransactItem => ({
  ConditionCheck: { Key: teamKeys.byId(orgId, teamId), ConditionExpression: teamLive },
  reason: 'team-missing',
});

/**
 * The writes that add a member to a team: the user must be a member of the organization (`not-member`)
 * and not of the team yet (`already-team-member`), and the team's member count moves with it, so the
 * count never drifts from the members.
 */
export const teamJoinWrites = (member: TeamMemberItem): TransactItem[] => [
  isMemberCheck(member.org_id, member.user_id),
  { Put: { Item: member, ConditionExpression: itemIsNew }, reason: 'already-team-member' },
  {
    Update: {
      Key: teamKeys.byId(member.org_id, member.team_id),
      UpdateExpression: countMembers,
      ConditionExpression: teamLive,
      ExpressionAttributeValues: { ':delta': 1 },
    },
    reason: 'team-missing',
  },
];

/**
 * The writes that take a user out of every team of an organization, each with its team's member count,
 * for when the user leaves the organization or is erased. One Query over the organization's team
 * members: leaving is rare, so no per-user index is kept for it.
 */
export async function teamLeavingWrites(orgId: string, userId: number): Promise<TransactItem[]> {
  const query = teamRange(orgId, MEMBER_PREFIX);
  const memberships = await queryPage<Pick<TeamMemberItem, 'pk' | 'sk' | 'team_id'>>(
    {
      ...query,
      FilterExpression: 'user_id = :user',
      ExpressionAttributeValues: { ...query.ExpressionAttributeValues, ':user': userId },
      ProjectionExpression: 'pk, sk, team_id',
    },
    everything,
  );
  return memberships.items.flatMap((member): TransactItem[] => [
    { Delete: { Key: { pk: member.pk, sk: member.sk } } },
    {
      Update: {
        Key: teamKeys.byId(orgId, member.team_id),
        UpdateExpression: countMembers,
        ConditionExpression: itemExists,
        ExpressionAttributeValues: { ':delta': -1 },
      },
    },
  ]);
}
