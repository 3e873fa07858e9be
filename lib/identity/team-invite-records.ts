import { sha256 } from '#lib/crypto/secrets';
import { allOf, anyOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { type Page, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import type { TeamRole } from '#lib/identity/roles';
import { teamKeys, teamLiveCheck, teamRange } from '#lib/identity/team-records';
import { epochSeconds } from '#lib/identity/ttl';

/**
 * Team invites as stored: the invite, the lookup item of its token and the guard that keeps one open
 * invite per address and team. Their keys are in the team key table (lib/identity/team-records), with
 * the refusal reasons their writes carry.
 */
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

export interface TeamInviteTokenItem {
  pk: string;
  sk: string;
  org_id: string;
  team_id: number;
  invite_id: string;
  expires_at: number;
}

export type TeamInviteStatus = 'pending' | 'accepted' | 'expired';

export type TeamInvite = Pick<TeamInviteItem, 'id' | 'email' | 'role' | 'created_at' | 'invited_by'> & {
  status: TeamInviteStatus;
  expires_at: string;
};

export const toTeamInvite = (item: TeamInviteItem, now: Date): TeamInvite => ({
  id: item.id,
  email: item.email,
  role: item.role,
  status: item.status === 'pending' && new Date(item.valid_until) <= now ? 'expired' : item.status,
  expires_at: item.valid_until,
  created_at: item.created_at,
  invited_by: item.invited_by ?? null,
});

/** An open invite's guard may be taken over only once its invite has expired (TTL removal lags). */
const noOpenInvite = anyOf(itemIsNew, 'expires_at <= :now');
const tokenUnexpired = allOf(itemExists, 'expires_at > :now');
const stillPending = '#status = :pending';
const STATUS = { '#status': 'status' };

/** A token's lookup item, read strongly: acceptance must not see a token that was just used. */
export async function getTeamInviteToken(token: string): Promise<TeamInviteTokenItem | undefined> {
  const found = await table.get({ Key: teamKeys.inviteToken(sha256(token)), ConsistentRead: true });
  return found.Item as TeamInviteTokenItem | undefined;
}

export async function getTeamInvite(
  orgId: string,
  teamId: number,
  inviteId: string,
): Promise<TeamInviteItem | undefined> {
  const found = await table.get({ Key: teamKeys.invite(orgId, teamId, inviteId), ConsistentRead: true });
  return found.Item as TeamInviteItem | undefined;
}

/** A team's invites still waiting for an answer and not expired. */
export async function listOpenTeamInvites(input: {
  orgId: string;
  teamId: number;
  now: Date;
  limit: number;
  offset: number;
}): Promise<Page<TeamInviteItem>> {
  const query = teamRange(input.orgId, teamKeys.invitesPrefix(input.teamId));
  return queryPage<TeamInviteItem>(
    {
      ...query,
      FilterExpression: `${stillPending} AND valid_until > :now`,
      ExpressionAttributeNames: STATUS,
      ExpressionAttributeValues: {
        ...query.ExpressionAttributeValues,
        ':pending': 'pending',
        ':now': input.now.toISOString(),
      },
    },
    { limit: input.limit, offset: input.offset },
  );
}

/**
 * The writes that open an invite: the address's guard (`team-invite-active` while another invite is
 * open), the invite, its token lookup and a check that the team is live (`team-missing`).
 */
export function newTeamInviteWrites(
  invite: TeamInviteItem,
  lookup: TeamInviteTokenItem,
  nowSeconds: number,
): TransactItem[] {
  const guard = {
    ...teamKeys.activeInvite(invite.org_id, invite.team_id, invite.email),
    invite_id: invite.id,
    expires_at: lookup.expires_at,
  };
  return [
    {
      Put: {
        Item: guard,
        ConditionExpression: noOpenInvite,
        ExpressionAttributeValues: { ':now': nowSeconds },
      },
      reason: 'team-invite-active',
    },
    { Put: { Item: invite, ConditionExpression: itemIsNew }, reason: 'team-invite-exists' },
    { Put: { Item: lookup, ConditionExpression: itemIsNew }, reason: 'team-invite-exists' },
    teamLiveCheck(invite.org_id, invite.team_id),
  ];
}

/** The writes that take back an invite nobody received. */
export const teamInviteWithdrawalWrites = (invite: TeamInviteItem): TransactItem[] => [
  { Delete: { Key: teamKeys.activeInvite(invite.org_id, invite.team_id, invite.email) } },
  { Delete: { Key: teamKeys.invite(invite.org_id, invite.team_id, invite.id) } },
  { Delete: { Key: teamKeys.inviteToken(invite.token_hash) } },
];

/**
 * The writes that use up an invite, at most once even for concurrent requests: the token lookup is
 * deleted while unexpired and the invite marked accepted while pending (both `team-invite-used`). The
 * guard goes too: it is this invite's, since another could take it over only after this one expired.
 */
export function teamInviteAcceptanceWrites(input: {
  lookup: TeamInviteTokenItem;
  invite: TeamInviteItem;
  userId: number;
  now: Date;
}): TransactItem[] {
  const { lookup, invite, now } = input;
  return [
    {
      Delete: {
        Key: { pk: lookup.pk, sk: lookup.sk },
        ConditionExpression: tokenUnexpired,
        ExpressionAttributeValues: { ':now': epochSeconds(now) },
      },
      reason: 'team-invite-used',
    },
    {
      Update: {
        Key: teamKeys.invite(invite.org_id, invite.team_id, invite.id),
        UpdateExpression: 'SET #status = :accepted, accepted_at = :at, accepted_by = :user',
        ConditionExpression: stillPending,
        ExpressionAttributeNames: STATUS,
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':accepted': 'accepted',
          ':at': now.toISOString(),
          ':user': input.userId,
        },
      },
      reason: 'team-invite-used',
    },
    { Delete: { Key: teamKeys.activeInvite(invite.org_id, invite.team_id, invite.email) } },
  ];
}
