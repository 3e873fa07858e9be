import { randomBase62, randomToken, sha256 } from '#lib/crypto/secrets';
import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError } from '#lib/errors';
import { requireUser } from '#lib/identity/access';
import {
  getInviteToken,
  type Invite,
  type InviteItem,
  type InviteTokenItem,
  inviteAcceptanceWrites,
  inviteKeys,
  inviteWithdrawalWrites,
  listPendingInvites,
  newInviteWrites,
  toInvite,
} from '#lib/identity/invite-records';
import { isMember, type Member, membershipItem, newMembershipWrite, toMember } from '#lib/identity/memberships';
import { accessOrg, orgNotFound, requireRole } from '#lib/identity/organization-access';
import { getOrganizationItem, memberCountChange, type Organization, toOrganization } from '#lib/identity/organizations';
import type { OrgRole } from '#lib/identity/roles';
import { DAY_SECONDS, epochSeconds } from '#lib/identity/ttl';
import { getUserItem, userExistsCheck, userIdByEmail } from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';

/**
 * Invites into an organization as the `/organizations/{id}/invites` routes manage them: an admin invites
 * an address, the link goes out by email, and the user who follows it joins with the invite's role.
 */

/** How long an invite link stays valid. */
export const INVITE_VALID_DAYS = 7;
/** Accepted and expired invites stay listed as history this long before TTL removes them. */
const INVITE_RETENTION_DAYS = 30;

const userNotFound = () => new NotFoundError('User not found');
const inviteNotFound = () => new NotFoundError('Invite not found, expired or already used');
/**
 * The one detail here that names its request location itself: the accept route has no body (and
 * registration's has no user_id), yet this detail has always said `body.user_id`, and the HTTP layer
 * would place a bare `user_id` in the query. A located path is left as it is.
 */
const alreadyMember = () =>
  new ConflictError('The user is already a member of this organization', [
    { path: 'body.user_id', message: 'is already a member' },
  ]);
const memberAlready = () =>
  new ConflictError('This address belongs to a member already', [{ path: 'email', message: 'is already a member' }]);
const inviteActive = () =>
  new ConflictError('An active invite exists for this address', [{ path: 'email', message: 'has an active invite' }]);

/** Invite ids start with their creation time, so the tenant's `INVITE#` range lists oldest first. */
const newInviteId = (now: Date): string => `inv_${now.getTime().toString(36).padStart(9, '0')}${randomBase62(10)}`;

/** The pending invites of an organization the caller can see (never their tokens), oldest first. */
export async function listInvites(ctx: RequestContext, orgId: string, page: PageRequest): Promise<Page<Invite>> {
  await accessOrg(ctx, orgId);
  const now = ctx.ports.clock.now();
  const result = await listPendingInvites({ orgId, now, ...page });
  return { items: result.items.map((item) => toInvite(item, now)), total: result.total };
}

/**
 * Invites an address into an organization (admin or above) and emails the accept link. One active
 * invite per address: the guard item's conditional put (absent, or its invite expired) refuses a second
 * one atomically. The raw token exists only in the email; the table holds its SHA-256.
 */
export async function createInvite(
  ctx: RequestContext,
  orgId: string,
  input: { email: string; role: OrgRole },
): Promise<Invite> {
  const access = await accessOrg(ctx, orgId);
  requireRole(access, 'admin', 'invite members');
  const existingUser = await userIdByEmail(input.email);
  if (existingUser !== undefined && (await isMember(orgId, existingUser))) throw memberAlready();

  const now = ctx.ports.clock.now();
  const createdAt = now.toISOString();
  const validUntil = new Date(now.getTime() + INVITE_VALID_DAYS * DAY_SECONDS * 1000);
  const validUntilIso = validUntil.toISOString();
  const token = randomToken(32);
  const inviteId = newInviteId(now);
  const invite: InviteItem = {
    ...inviteKeys.byId(orgId, inviteId),
    id: inviteId,
    org_id: orgId,
    email: input.email,
    role: input.role,
    invited_by: access.principal.userId ?? null,
    created_at: createdAt,
    valid_until: validUntilIso,
    expires_at: epochSeconds(validUntil) + INVITE_RETENTION_DAYS * DAY_SECONDS,
  };
  const tokenItem: InviteTokenItem = {
    ...inviteKeys.token(sha256(token)),
    org_id: orgId,
    invite_id: invite.id,
    email: input.email,
    role: input.role,
    valid_until: validUntilIso,
    expires_at: epochSeconds(validUntil),
  };
  await transact(newInviteWrites(invite, tokenItem, createdAt), {
    'invite-active': inviteActive,
    'organization-missing': orgNotFound,
  });

  const link = `${ctx.baseUrl}/organizations/invites/${encodeURIComponent(token)}/accept`;
  try {
    await ctx.ports.email.send({
      to: input.email,
      subject: `You are invited to join ${access.org.name}`,
      text: [
        `You have been invited to join the organization ${access.org.name} as ${input.role}.`,
        '',
        `To accept, send an authenticated POST request to ${link}`,
        '',
        `The invite expires at ${validUntilIso}.`,
      ].join('\n'),
    });
  } catch (error) {
    // An invite nobody received would block a new one for a week: take it back before failing.
    await transact(inviteWithdrawalWrites(invite, tokenItem)).catch(() => undefined);
    throw error;
  }
  return toInvite(invite, now);
}

export interface AcceptedInvite {
  organization: Organization;
  member: Member;
}

/** POST /organizations/invites/{token}/accept: the calling user accepts. */
export async function acceptInvite(ctx: RequestContext, token: string): Promise<AcceptedInvite> {
  const principal = requireUser(ctx);
  return acceptInviteForUser(ctx, token, principal.userId);
}

/**
 * Makes `userId` a member with the invite's role and consumes the invite, exactly once: deleting the
 * token item on the condition that it is still there and unexpired is what a second accept (or a
 * concurrent one) fails on, with 404. The membership, the member count, the invite's history and the
 * release of the active-invite guard land in the same transaction. 409 when the user is a member
 * already; the invite then stays pending.
 *
 * Registration calls this with the new user's id when it is given an invite token.
 */
export async function acceptInviteForUser(ctx: RequestContext, token: string, userId: number): Promise<AcceptedInvite> {
  const item = await getInviteToken(token);
  const now = ctx.ports.clock.now().toISOString();
  // TTL removes expired items lazily, so an item that is still there may be past its time.
  if (!item || item.valid_until <= now) throw inviteNotFound();
  const [org, user] = await Promise.all([getOrganizationItem(item.org_id), getUserItem(userId)]);
  if (!org) throw inviteNotFound();
  if (!user) throw userNotFound();

  const membership = membershipItem({ orgId: item.org_id, userId, role: item.role, now });
  await transact(
    [
      ...inviteAcceptanceWrites(item, userId, now),
      newMembershipWrite(membership),
      memberCountChange(item.org_id, 1),
      userExistsCheck(userId),
    ],
    {
      'invite-used': inviteNotFound,
      'already-member': alreadyMember,
      'organization-missing': inviteNotFound,
      'user-missing': userNotFound,
    },
  );
  return {
    organization: toOrganization({ ...org, member_count: org.member_count + 1 }),
    member: toMember(membership, user),
  };
}
