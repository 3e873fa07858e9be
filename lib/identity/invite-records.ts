import { sha256 } from '#lib/crypto/secrets';
import { allOf, anyOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { type TableKey, tenantPk } from '#lib/db/keys';
import { type Page, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { organizationKeys, organizationLive } from '#lib/identity/organizations';
import type { OrgRole } from '#lib/identity/roles';

const INVITE_PREFIX = 'INVITE#';

/**
 * Organization invites as stored. The raw token exists only in the invite email; the table holds its
 * SHA-256.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | invite | `T#<org>` | `INVITE#<id>` | TTL 30 days past its expiry: accepted and expired ones stay as history |
 * | invite token | `INVITETOKEN#<sha256>` | `INVITETOKEN` | TTL at the invite's expiry; deleted on acceptance |
 * | active-invite guard | `T#<org>` | `INVITEFOR#<email lowercased>` | one active invite per address: its id, expiry |
 *
 * Reasons an invite write is refused with: `invite-active` (the address has an unexpired invite),
 * `invite-used` (accepted, expired or gone meanwhile), `invite-exists` (a new id is in use) and, from
 * the organization's check, `organization-missing`.
 */
export const inviteKeys = {
  byId: (orgId: string, inviteId: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `${INVITE_PREFIX}${inviteId}`,
  }),
  token: (tokenHash: string): TableKey => ({ pk: `INVITETOKEN#${tokenHash}`, sk: 'INVITETOKEN' }),
  activeGuard: (orgId: string, email: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `INVITEFOR#${email.toLowerCase()}`,
  }),
};

/**
 * An invite as stored. `valid_until` is the invite's expiry as the API shows it; `expires_at` is only
 * the table's TTL (epoch seconds), set later so that the history outlives it.
 */
export interface InviteItem {
  pk: string;
  sk: string;
  id: string;
  org_id: string;
  email: string;
  role: OrgRole;
  invited_by: number | null;
  created_at: string;
  valid_until: string;
  accepted_at?: string;
  accepted_by?: number;
  expires_at: number;
}

/** The lookup item of a token: the only place the token exists, and only as a hash. */
export interface InviteTokenItem {
  pk: string;
  sk: string;
  org_id: string;
  invite_id: string;
  /** The invited address, to find the active-invite guard on acceptance. */
  email: string;
  role: OrgRole;
  valid_until: string;
  expires_at: number;
}

/** The guard that allows one active invite per address and organization. */
export interface ActiveInviteItem {
  pk: string;
  sk: string;
  invite_id: string;
  valid_until: string;
  expires_at: number;
}

export type InviteStatus = 'pending' | 'accepted' | 'expired';

/** The invite record of the API (never its token). */
export type Invite = Pick<InviteItem, 'id' | 'email' | 'role' | 'created_at' | 'invited_by'> & {
  status: InviteStatus;
  expires_at: string;
};

export const inviteStatus = (item: InviteItem, now: Date): InviteStatus => {
  if (item.accepted_at) return 'accepted';
  return item.valid_until > now.toISOString() ? 'pending' : 'expired';
};

export const toInvite = (item: InviteItem, now: Date): Invite => ({
  id: item.id,
  email: item.email,
  role: item.role,
  status: inviteStatus(item, now),
  expires_at: item.valid_until,
  created_at: item.created_at,
  invited_by: item.invited_by ?? null,
});

/** A guard may be taken over once its invite has expired (TTL removal lags behind). */
const noActiveInvite = anyOf(itemIsNew, 'valid_until <= :now');
const tokenUnexpired = allOf(itemExists, 'valid_until > :now');
const notAccepted = allOf(itemExists, 'attribute_not_exists(accepted_at)');
/** The guard is absent or still this invite's: a newer invite's guard is left alone. */
const guardOfInvite = anyOf(itemIsNew, 'invite_id = :invite');

/** A token's lookup item, read strongly: acceptance must not see a token that was just used. */
export async function getInviteToken(token: string): Promise<InviteTokenItem | undefined> {
  const found = await table.get({ Key: inviteKeys.token(sha256(token)), ConsistentRead: true });
  return found.Item as InviteTokenItem | undefined;
}

/** An organization's pending invites, oldest first (invite ids start with their creation time). */
export async function listPendingInvites(input: {
  orgId: string;
  now: Date;
  limit: number;
  offset: number;
}): Promise<Page<InviteItem>> {
  return queryPage<InviteItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :invite)',
      ExpressionAttributeValues: { ':pk': tenantPk(input.orgId), ':invite': INVITE_PREFIX },
    },
    { limit: input.limit, offset: input.offset },
    (item) => inviteStatus(item, input.now) === 'pending',
  );
}

/**
 * The writes that open an invite: the address's guard (`invite-active` while another invite is
 * unexpired), the invite, its token and a check that the organization is live.
 */
export function newInviteWrites(invite: InviteItem, token: InviteTokenItem, now: string): TransactItem[] {
  const guard: ActiveInviteItem = {
    ...inviteKeys.activeGuard(invite.org_id, invite.email),
    invite_id: invite.id,
    valid_until: invite.valid_until,
    expires_at: token.expires_at,
  };
  return [
    {
      Put: { Item: guard, ConditionExpression: noActiveInvite, ExpressionAttributeValues: { ':now': now } },
      reason: 'invite-active',
    },
    { Put: { Item: invite, ConditionExpression: itemIsNew }, reason: 'invite-exists' },
    { Put: { Item: token, ConditionExpression: itemIsNew }, reason: 'invite-exists' },
    {
      ConditionCheck: { Key: organizationKeys.byId(invite.org_id), ConditionExpression: organizationLive },
      reason: 'organization-missing',
    },
  ];
}

/** The writes that take back an invite nobody received. */
export const inviteWithdrawalWrites = (invite: InviteItem, token: InviteTokenItem): TransactItem[] => [
  { Delete: { Key: inviteKeys.activeGuard(invite.org_id, invite.email) } },
  { Delete: { Key: { pk: invite.pk, sk: invite.sk } } },
  { Delete: { Key: { pk: token.pk, sk: token.sk } } },
];

/**
 * The writes that use up an invite, exactly once: the token is deleted while it is there and unexpired,
 * the invite records who accepted it, and the address's guard goes if it is still this invite's. Each
 * is refused with `invite-used`.
 */
export function inviteAcceptanceWrites(token: InviteTokenItem, userId: number, now: string): TransactItem[] {
  return [
    {
      Delete: {
        Key: { pk: token.pk, sk: token.sk },
        ConditionExpression: tokenUnexpired,
        ExpressionAttributeValues: { ':now': now },
      },
      reason: 'invite-used',
    },
    {
      Update: {
        Key: inviteKeys.byId(token.org_id, token.invite_id),
        UpdateExpression: 'SET accepted_at = :now, accepted_by = :user',
        ConditionExpression: notAccepted,
        ExpressionAttributeValues: { ':now': now, ':user': userId },
      },
      reason: 'invite-used',
    },
    {
      Delete: {
        Key: inviteKeys.activeGuard(token.org_id, token.email),
        ConditionExpression: guardOfInvite,
        ExpressionAttributeValues: { ':invite': token.invite_id },
      },
      reason: 'invite-used',
    },
  ];
}
