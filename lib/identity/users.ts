import type { RequestContext } from '#lib/context';
import { randomBase62 } from '#lib/crypto/secrets';
import { getMany } from '#lib/db/batch';
import { counterKey, nextId } from '#lib/db/counters';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { claimUnique, itemExists, releaseUnique, transact, uniqueKey } from '#lib/db/transactions';
import { ConflictError, ForbiddenError, NotFoundError } from '#lib/errors';
import { requireUser } from '#lib/identity/access';
import { identityKeys, UNIQUE_EMAIL, UNIQUE_ORG_SLUG, UNIQUE_USERNAME } from '#lib/identity/keys';
import {
  getOrganizationItem,
  type OrganizationItem,
  organizationItems,
  personalOrgSlug,
} from '#lib/identity/organizations';
import { hashPassword } from '#lib/identity/passwords';
import { teamLeavingWrites } from '#lib/identity/team-leaving';

/** A user as stored. `password_hash` and `token_version` never leave this module's callers' hands. */
export interface UserItem {
  pk: string;
  sk: string;
  id: number;
  username: string;
  email: string;
  role: string;
  avatar_url: string | null;
  password_hash: string;
  token_version: number;
  personal_org_id: string;
  created_at: string;
  updated_at: string;
}

/** The user record of the API: explicitly mapped, never the stored item. */
export interface User {
  id: number;
  username: string;
  email: string;
  role: string;
  avatar_url: string | null;
  created_at: string;
  updated_at: string;
}

export const toUser = (item: UserItem): User => ({
  id: item.id,
  username: item.username,
  email: item.email,
  role: item.role,
  avatar_url: item.avatar_url ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
});

const usernameTaken = () =>
  new ConflictError('A user with this username already exists', [
    { path: 'body.username', message: 'is taken' },
  ]);
const emailTaken = () =>
  new ConflictError('A user with this email already exists', [{ path: 'body.email', message: 'is taken' }]);

export interface NewUser {
  username: string;
  email: string;
  password: string;
}

/**
 * Registers a user with a personal organization that the user owns, in one transaction: the user, the
 * email and username guards, the organization, its slug guard and the owner membership all land, or
 * nothing does. The instance's first user (id 1, handed out by an atomic counter) is its admin.
 */
export async function registerUser(
  ctx: RequestContext,
  input: NewUser,
): Promise<{ user: UserItem; org: OrganizationItem }> {
  const passwordHash = await hashPassword(input.password);
  const userId = await nextId(counterKey('users'));
  const now = ctx.clock.now().toISOString();
  const orgId = `org_${randomBase62(16)}`;
  const user: UserItem = {
    ...identityKeys.user(userId),
    id: userId,
    username: input.username,
    email: input.email,
    role: userId === 1 ? 'admin' : 'member',
    avatar_url: null,
    password_hash: passwordHash,
    token_version: 0,
    personal_org_id: orgId,
    created_at: now,
    updated_at: now,
  };
  for (const slug of [
    personalOrgSlug(input.username),
    `${personalOrgSlug(input.username)}-${randomBase62(6).toLowerCase()}`,
  ]) {
    const org = organizationItems({
      orgId,
      name: input.username,
      slug,
      ownerId: userId,
      now,
      tier: undefined,
    });
    const userWrites = [
      claimUnique(UNIQUE_EMAIL, input.email, String(userId)),
      claimUnique(UNIQUE_USERNAME, input.username, String(userId)),
      {
        Put: {
          Item: { ...user, ...identityKeys.usersIndex(userId) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ];
    try {
      // The organization's slug guard is the first of its writes, right after the user's.
      await transact([...userWrites, ...org.writes], {
        0: emailTaken,
        1: usernameTaken,
        [userWrites.length]: () => new SlugRetry(),
      });
      return { user, org: org.item };
    } catch (error) {
      if (!(error instanceof SlugRetry)) throw error;
    }
  }
  throw new ConflictError('Could not find a free slug for the personal organization; try again');
}

class SlugRetry extends Error {}

export async function getUserItem(userId: number): Promise<UserItem | undefined> {
  const result = await table.get({ Key: identityKeys.user(userId) });
  return result.Item as UserItem | undefined;
}

/** The user id registered under an email address (the email guard names its owner). */
export async function userIdByEmail(email: string): Promise<number | undefined> {
  const result = await table.get({ Key: uniqueKey(UNIQUE_EMAIL, email) });
  return result.Item ? Number(result.Item.owner) : undefined;
}

export async function getUsersByIds(ids: number[]): Promise<UserItem[]> {
  const users = await getMany<UserItem>(ids.map((id) => identityKeys.user(id)));
  return users.filter((user): user is UserItem => user !== undefined);
}

/**
 * Users the caller may see: every user for an instance admin, otherwise the members of the active
 * organization. Anyone else is invisible (404), as records of another tenant are.
 */
export async function listUsers(ctx: RequestContext, page: PageRequest): Promise<Page<User>> {
  const principal = requireUser(ctx);
  if (principal.isInstanceAdmin) {
    const result = await queryPage<UserItem>(
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': 'USERS' },
      },
      page,
    );
    return { items: result.items.map(toUser), total: result.total };
  }
  const members = await queryPage<{ user_id: number }>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :member)',
      ExpressionAttributeValues: {
        ':pk': identityKeys.organization(principal.orgId).pk,
        ':member': 'MEMBER#',
      },
      ProjectionExpression: 'user_id',
    },
    page,
  );
  const users = await getUsersByIds(members.items.map((member) => member.user_id));
  return { items: users.map(toUser), total: members.total };
}

/** A user the caller may see (see listUsers), or 404. */
export async function getVisibleUser(ctx: RequestContext, userId: number): Promise<UserItem> {
  const principal = requireUser(ctx);
  const user = await getUserItem(userId);
  if (!user) throw new NotFoundError('User not found');
  if (principal.isInstanceAdmin || principal.userId === userId) return user;
  const membership = await table.get({
    Key: identityKeys.membership(principal.orgId, userId),
    ProjectionExpression: 'pk',
  });
  if (!membership.Item) throw new NotFoundError('User not found');
  return user;
}

export interface UserChanges {
  username?: string;
  email?: string;
  role?: string;
}

/** Instance admins only. Renames move the uniqueness guards in the same transaction as the record. */
export async function updateUser(ctx: RequestContext, userId: number, changes: UserChanges): Promise<User> {
  requireInstanceAdmin(ctx);
  const user = await getUserItem(userId);
  if (!user) throw new NotFoundError('User not found');
  const now = ctx.clock.now().toISOString();
  const next = { ...user, ...changes, updated_at: now };
  const guardMoves = [];
  const conflicts: Record<number, () => Error> = {};
  if (changes.email && changes.email.toLowerCase() !== user.email.toLowerCase()) {
    conflicts[guardMoves.length] = emailTaken;
    guardMoves.push(
      claimUnique(UNIQUE_EMAIL, changes.email, String(userId)),
      releaseUnique(UNIQUE_EMAIL, user.email),
    );
  }
  if (changes.username && changes.username.toLowerCase() !== user.username.toLowerCase()) {
    conflicts[guardMoves.length] = usernameTaken;
    guardMoves.push(
      claimUnique(UNIQUE_USERNAME, changes.username, String(userId)),
      releaseUnique(UNIQUE_USERNAME, user.username),
    );
  }
  await transact(
    [
      ...guardMoves,
      {
        Update: {
          Key: identityKeys.user(userId),
          UpdateExpression: 'SET username = :username, email = :email, #role = :role, updated_at = :now',
          ConditionExpression: itemExists,
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: {
            ':username': next.username,
            ':email': next.email,
            ':role': next.role,
            ':now': now,
          },
        },
      },
    ],
    { ...conflicts, [guardMoves.length]: () => new NotFoundError('User not found') },
  );
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
  if (!user) throw new NotFoundError('User not found');
  await eraseUser(user);
  return { id: userId };
}

/** DELETE /users/me: self-erasure, refused to admins so that an instance never loses its last admin by accident. */
export async function deleteOwnAccount(ctx: RequestContext): Promise<{ id: number }> {
  const principal = requireUser(ctx);
  if (principal.isInstanceAdmin) throw new ForbiddenError('Admin accounts cannot delete themselves');
  const user = await getUserItem(principal.userId);
  if (!user) throw new NotFoundError('User not found');
  await eraseUser(user);
  return { id: user.id };
}

/**
 * Erases a user's personal data: the record (name, email, password hash), the guards that held the
 * email and username, and every organization membership. Tokens die with the record, since each
 * request re-reads it.
 */
async function eraseUser(user: UserItem): Promise<void> {
  const memberships = await table.query({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': identityKeys.membershipByUser(user.id, '').gsi1pk },
    ProjectionExpression: 'pk, sk, org_id',
  });
  const teamWrites = await Promise.all(
    (memberships.Items ?? []).map((membership) => teamLeavingWrites(membership.org_id as string, user.id)),
  );
  const membershipDeletes = (memberships.Items ?? []).flatMap((membership) => [
    { Delete: { Key: { pk: membership.pk, sk: membership.sk } } },
    {
      Update: {
        Key: identityKeys.organization(membership.org_id as string),
        UpdateExpression: 'ADD member_count :minus',
        ConditionExpression: itemExists,
        ExpressionAttributeValues: { ':minus': -1 },
      },
    },
  ]);
  // The personal organization goes with its owner: soft-deleted, its slug free again.
  const personal = await getOrganizationItem(user.personal_org_id);
  const closePersonal = personal
    ? [
        {
          Update: {
            Key: identityKeys.organization(personal.id),
            UpdateExpression: 'SET deleted_at = :now',
            ExpressionAttributeValues: { ':now': new Date().toISOString() },
          },
        },
        releaseUnique(UNIQUE_ORG_SLUG, personal.slug),
      ]
    : [];
  // One transaction cannot touch an item twice: the closed personal organization keeps its count.
  const otherWrites = [
    ...(personal
      ? membershipDeletes.filter((write) => !('Update' in write && write.Update?.Key.pk === personal.pk))
      : membershipDeletes),
    ...teamWrites.flat(),
  ];
  const head = [
    { Delete: { Key: identityKeys.user(user.id) } },
    releaseUnique(UNIQUE_EMAIL, user.email),
    releaseUnique(UNIQUE_USERNAME, user.username),
    ...closePersonal,
  ];
  const room = 100 - head.length;
  await transact([...head, ...otherWrites.slice(0, room)]);
  for (let start = room; start < otherWrites.length; start += 100) {
    await transact(otherWrites.slice(start, start + 100));
  }
}

/** Invalidates every access and refresh token of the user ("log out everywhere", password reset). */
export async function bumpTokenVersion(userId: number): Promise<void> {
  await table.update({
    Key: identityKeys.user(userId),
    UpdateExpression: 'ADD token_version :one',
    ConditionExpression: itemExists,
    ExpressionAttributeValues: { ':one': 1 },
  });
}
