import type { Page, PageRequest } from '#lib/db/paging';
import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError } from '#lib/errors';
import {
  anotherOwner,
  getMembership,
  listMembersOfOrganization,
  type Member,
  type MembershipItem,
  membershipItem,
  membershipRemovalWrite,
  newMembershipWrite,
  ownerRemainsCheck,
  roleChangeWrite,
  toMember,
} from '#lib/identity/memberships';
import { accessOrg, orgNotFound, requireRole } from '#lib/identity/organization-access';
import { memberCountChange } from '#lib/identity/organizations';
import type { OrgRole } from '#lib/identity/roles';
import { teamLeavingWrites } from '#lib/identity/team-records';
import { getUserItem, getUsersByIds, userExistsCheck } from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';

/**
 * The members of an organization as the `/organizations/{id}/members` routes manage them. Every
 * membership write changes the organization's member count in the same transaction.
 */

const memberNotFound = () => new NotFoundError('Member not found');
const userNotFound = () => new NotFoundError('User not found');
const alreadyMember = () =>
  new ConflictError('The user is already a member of this organization', [
    { path: 'user_id', message: 'is already a member' },
  ]);
const lastOwner = () => new ConflictError('The organization’s last owner cannot be demoted or removed');
const changedMeanwhile = () => new ConflictError('The record was changed by another request; try again');

/** The members of an organization the caller can see, by user id. */
export async function listMembers(ctx: RequestContext, orgId: string, page: PageRequest): Promise<Page<Member>> {
  await accessOrg(ctx, orgId);
  const memberships = await listMembersOfOrganization({ orgId, ...page });
  const users = new Map(
    (await getUsersByIds(memberships.items.map((membership) => membership.user_id))).map((user) => [user.id, user]),
  );
  // A user erased in the meantime takes their memberships along; until then they are skipped here.
  const items = memberships.items.flatMap((membership) => {
    const user = users.get(membership.user_id);
    return user ? [toMember(membership, user)] : [];
  });
  return { items, total: memberships.total };
}

/**
 * Adds an existing user to an organization (admin or above; only an owner may add an owner). The
 * membership, the member count and a check that the user still exists land in one transaction.
 */
export async function addMember(
  ctx: RequestContext,
  orgId: string,
  input: { userId: number; role: OrgRole },
): Promise<Member> {
  const access = await accessOrg(ctx, orgId);
  requireRole(access, 'admin', 'add members');
  if (input.role === 'owner') requireRole(access, 'owner', 'add an owner');
  const user = await getUserItem(input.userId);
  if (!user) throw userNotFound();
  const now = ctx.ports.clock.now().toISOString();
  const membership = membershipItem({ orgId, userId: input.userId, role: input.role, now });
  await transact([newMembershipWrite(membership), memberCountChange(orgId, 1), userExistsCheck(input.userId)], {
    'already-member': alreadyMember,
    'organization-missing': orgNotFound,
    'user-missing': userNotFound,
  });
  return toMember(membership, user);
}

/**
 * Demoting or removing an owner needs another owner, and checks in its transaction that this other
 * owner is still an owner, so two owners demoting each other at once cannot both win.
 */
async function ownerSuccessionCheck(orgId: string, userId: number): Promise<TransactItem> {
  const other = await anotherOwner(orgId, userId);
  if (other === undefined) throw lastOwner();
  return ownerRemainsCheck(orgId, other);
}

async function getMembershipOf(orgId: string, userId: number): Promise<MembershipItem> {
  const membership = await getMembership(orgId, userId, { consistent: true });
  if (!membership) throw memberNotFound();
  return membership;
}

/**
 * Changes a member's role (admin or above). Making or unmaking an owner needs an owner; the last owner
 * keeps the role (409).
 */
export async function changeMemberRole(
  ctx: RequestContext,
  orgId: string,
  userId: number,
  role: OrgRole,
): Promise<Member> {
  const access = await accessOrg(ctx, orgId);
  requireRole(access, 'admin', 'change member roles');
  const [membership, user] = await Promise.all([getMembershipOf(orgId, userId), getUserItem(userId)]);
  if (!user) throw memberNotFound();
  if (membership.role === role) return toMember(membership, user);
  if (role === 'owner' || membership.role === 'owner') requireRole(access, 'owner', 'make or unmake owners');
  const succession = membership.role === 'owner' ? [await ownerSuccessionCheck(orgId, userId)] : [];
  await transact([roleChangeWrite(membership, role), ...succession], {
    'membership-changed': changedMeanwhile,
    'last-owner': lastOwner,
  });
  return toMember({ ...membership, role }, user);
}

/**
 * Removes a member (admin or above; removing an owner needs an owner, and never the last one). The
 * membership and the member count change in one transaction. A user stays in their personal
 * organization, since logging in lands there.
 */
export async function removeMember(
  ctx: RequestContext,
  orgId: string,
  userId: number,
): Promise<{ organization_id: string; user_id: number }> {
  const access = await accessOrg(ctx, orgId);
  requireRole(access, 'admin', 'remove members');
  const membership = await getMembershipOf(orgId, userId);
  if (membership.role === 'owner') requireRole(access, 'owner', 'remove an owner');
  if (access.org.personal && access.org.owner_id === userId) {
    throw new ConflictError('A user cannot be removed from their personal organization');
  }
  const succession = membership.role === 'owner' ? [await ownerSuccessionCheck(orgId, userId)] : [];
  // Leaving the organization means leaving its teams too, in the same transaction.
  const teams = await teamLeavingWrites(orgId, userId);
  await transact([membershipRemovalWrite(membership), memberCountChange(orgId, -1), ...succession, ...teams], {
    'membership-changed': changedMeanwhile,
    'organization-missing': orgNotFound,
    'last-owner': lastOwner,
  });
  return { organization_id: orgId, user_id: userId };
}
