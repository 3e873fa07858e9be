import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { ForbiddenError, NotFoundError } from '#lib/errors';
import { requireUser } from '#lib/identity/access';
import {
  isMember,
  listMembershipsOfUser,
  listMembersOfOrganization,
  membershipErasureWrite,
} from '#lib/identity/memberships';
import { erasedMemberCount, getOrganizationItem, personalOrganizationClosingWrites } from '#lib/identity/organizations';
import { teamLeavingWrites } from '#lib/identity/team-records';
import {
  getUserItem,
  getUsersByIds,
  listAllUsers,
  toUser,
  type User,
  type UserChanges,
  type UserItem,
  userChangeWrites,
  userConflicts,
  userErasureWrites,
} from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';

/**
 * The `/users` routes: who may see which users, and the instance admin's changes and erasures. The
 * handler maps the record `getVisibleUser` answers with `toUser`, so it is part of this surface.
 */
export { toUser } from '#lib/identity/users';

const userNotFound = () => new NotFoundError('User not found');
/** TransactWriteItems takes at most 100 items. */
const TRANSACTION_LIMIT = 100;

/**
 * Users the caller may see: every user for an instance admin, otherwise the members of the active
 * organization. Anyone else is invisible (404), as records of another tenant are.
 */
export async function listUsers(ctx: RequestContext, page: PageRequest): Promise<Page<User>> {
  const principal = requireUser(ctx);
  if (principal.isInstanceAdmin) {
    const result = await listAllUsers(page);
    return { items: result.items.map(toUser), total: result.total };
  }
  const members = await listMembersOfOrganization({ orgId: principal.orgId, ...page });
  const users = await getUsersByIds(members.items.map((member) => member.user_id));
  return { items: users.map(toUser), total: members.total };
}

/** A user the caller may see (see listUsers), or 404. */
export async function getVisibleUser(ctx: RequestContext, userId: number): Promise<UserItem> {
  const principal = requireUser(ctx);
  const user = await getUserItem(userId);
  if (!user) throw userNotFound();
  if (principal.isInstanceAdmin || principal.userId === userId) return user;
  if (!(await isMember(principal.orgId, userId))) throw userNotFound();
  return user;
}

/** Instance admins only. Renames move the uniqueness guards in the same transaction as the record. */
export async function updateUser(ctx: RequestContext, userId: number, changes: UserChanges): Promise<User> {
  requireInstanceAdmin(ctx);
  const user = await getUserItem(userId);
  if (!user) throw userNotFound();
  const { next, writes } = userChangeWrites(user, changes, ctx.ports.clock.now().toISOString());
  await transact(writes, { ...userConflicts, 'user-missing': userNotFound });
  return toUser(next);
}

export function requireInstanceAdmin(ctx: RequestContext): void {
  const principal = requireUser(ctx);
  if (!principal.isInstanceAdmin) throw new ForbiddenError('Only an instance admin can do this');
}

/** DELETE /users/{id}: instance admins, never on their own account. */
export async function deleteUserAsAdmin(ctx: RequestContext, userId: number): Promise<{ id: number }> {
  requireInstanceAdmin(ctx);
  if (ctx.principal?.userId === userId) throw new ForbiddenError('You cannot delete your own account here');
  const user = await getUserItem(userId);
  if (!user) throw userNotFound();
  await eraseUser(user);
  return { id: userId };
}

/** DELETE /users/me: self-erasure, refused to admins so that an instance never loses its last admin by accident. */
export async function deleteOwnAccount(ctx: RequestContext): Promise<{ id: number }> {
  const principal = requireUser(ctx);
  if (principal.isInstanceAdmin) throw new ForbiddenError('Admin accounts cannot delete themselves');
  const user = await getUserItem(principal.userId);
  if (!user) throw userNotFound();
  await eraseUser(user);
  return { id: user.id };
}

/**
 * Erases a user's personal data: the record (name, email, password hash), the guards that held the
 * email and username, and every organization and team membership. Tokens die with the record, since
 * each request re-reads it.
 */
async function eraseUser(user: UserItem): Promise<void> {
  const memberships = await listMembershipsOfUser(user.id);
  const teamWrites = await Promise.all(memberships.map((membership) => teamLeavingWrites(membership.org_id, user.id)));
  // The personal organization goes with its owner: soft-deleted, its slug free again. It keeps its
  // member count, since one transaction cannot touch an item twice.
  const personal = await getOrganizationItem(user.personal_org_id);
  const membershipWrites = memberships.flatMap((membership) => [
    membershipErasureWrite(membership),
    ...(membership.org_id === personal?.id ? [] : [erasedMemberCount(membership.org_id)]),
  ]);
  const head = [
    ...userErasureWrites(user),
    ...(personal ? personalOrganizationClosingWrites(personal, new Date().toISOString()) : []),
  ];
  const otherWrites = [...membershipWrites, ...teamWrites.flat()];
  const room = TRANSACTION_LIMIT - head.length;
  await transact([...head, ...otherWrites.slice(0, room)]);
  for (let start = room; start < otherWrites.length; start += TRANSACTION_LIMIT) {
    await transact(otherWrites.slice(start, start + TRANSACTION_LIMIT));
  }
}
