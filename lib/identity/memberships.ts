import { allOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import type { OrgRole } from '#lib/identity/roles';
import type { UserItem } from '#lib/identity/users';

const MEMBER_PREFIX = 'MEMBER#';
const byUserPk = (userId: number): string => `USER#${userId}#ORGS`;

/**
 * Organization memberships as stored: in the organization's partition, indexed by user.
 *
 * | record | pk | sk | indexes |
 * |---|---|---|---|
 * | membership | `T#<org>` | `MEMBER#<pad user>` | gsi1: `USER#<id>#ORGS` / `ORG#<org>` (a user's organizations) |
 *
 * Reasons a membership write is refused with: `already-member`, `not-member`, `membership-changed`
 * (its role moved, or it went, since it was read) and `last-owner` (the owner a succession counted on
 * is no longer one).
 */
export const membershipKeys = {
  byId: (orgId: string, userId: number): TableKey => ({
    pk: tenantPk(orgId),
    sk: `${MEMBER_PREFIX}${pad(userId)}`,
  }),
  byUserIndex: (userId: number, orgId: string) => ({ gsi1pk: byUserPk(userId), gsi1sk: `ORG#${orgId}` }),
};

export interface MembershipItem {
  pk: string;
  sk: string;
  gsi1pk: string;
  gsi1sk: string;
  org_id: string;
  user_id: number;
  role: OrgRole;
  joined_at: string;
}

/** A member of the API: the membership with the user's name and address. */
export type Member = Pick<MembershipItem, 'user_id' | 'role' | 'joined_at'> & Pick<UserItem, 'username' | 'email'>;

export const toMember = (membership: MembershipItem, user: Pick<UserItem, 'username' | 'email'>): Member => ({
  user_id: membership.user_id,
  username: user.username,
  email: user.email,
  role: membership.role,
  joined_at: membership.joined_at,
});

/** The membership still has the role it was read with (`:current`): two role changes cannot cross. */
const roleUnchanged = allOf(itemExists, '#role = :current');
const isOwner = '#role = :owner';
/** The memberships of the organization `:pk`: the `MEMBER#` range of its partition. */
const membersOfOrganization = 'pk = :pk AND begins_with(sk, :member)';
const ROLE = { '#role': 'role' };

export const membershipItem = (input: {
  orgId: string;
  userId: number;
  role: OrgRole;
  now: string;
}): MembershipItem => ({
  ...membershipKeys.byId(input.orgId, input.userId),
  ...membershipKeys.byUserIndex(input.userId, input.orgId),
  org_id: input.orgId,
  user_id: input.userId,
  role: input.role,
  joined_at: input.now,
});

export async function getMembership(
  orgId: string,
  userId: number,
  options: { consistent?: boolean } = {},
): Promise<MembershipItem | undefined> {
  const result = await table.get({
    Key: membershipKeys.byId(orgId, userId),
    ...(options.consistent ? { ConsistentRead: true } : {}),
  });
  return result.Item as MembershipItem | undefined;
}

/** Whether the user is a member, reading no more of the membership than its key. */
export async function isMember(orgId: string, userId: number): Promise<boolean> {
  const result = await table.get({ Key: membershipKeys.byId(orgId, userId), ProjectionExpression: 'pk' });
  return result.Item !== undefined;
}

/** An organization's memberships, by user id. */
export async function listMembersOfOrganization(input: {
  orgId: string;
  limit: number;
  offset: number;
}): Promise<Page<MembershipItem>> {
  return queryPage<MembershipItem>(
    {
      KeyConditionExpression: membersOfOrganization,
      ExpressionAttributeValues: { ':pk': tenantPk(input.orgId), ':member': MEMBER_PREFIX },
    },
    { limit: input.limit, offset: input.offset },
  );
}

/** Every membership of a user, deleted organizations' included. A user belongs to few organizations. */
export async function listMembershipsOfUser(userId: number): Promise<MembershipItem[]> {
  const all: PageRequest = { limit: Number.MAX_SAFE_INTEGER, offset: 0 };
  const result = await queryPage<MembershipItem>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': byUserPk(userId) },
    },
    all,
  );
  return result.items;
}

/** An owner of the organization other than `userId`, if there is one. */
export async function anotherOwner(orgId: string, userId: number): Promise<number | undefined> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: membersOfOrganization,
      FilterExpression: `${isOwner} AND user_id <> :user`,
      ExpressionAttributeNames: ROLE,
      ExpressionAttributeValues: {
        ':pk': tenantPk(orgId),
        ':member': MEMBER_PREFIX,
        ':owner': 'owner',
        ':user': userId,
      },
      ProjectionExpression: 'user_id',
      ExclusiveStartKey: startKey,
    });
    const found = result.Items?.[0];
    if (found) return Number(found.user_id);
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return undefined;
}

/** For another record's transaction: the user must be a member (`not-member`). */
export const isMemberCheck = (orgId: string, userId: number): TransactItem => ({
  ConditionCheck: { Key: membershipKeys.byId(orgId, userId), ConditionExpression: itemExists },
  reason: 'not-member',
});

/** Adds a membership; refused with `already-member` when the user has one. */
export const newMembershipWrite = (item: MembershipItem): TransactItem => ({
  Put: { Item: item, ConditionExpression: itemIsNew },
  reason: 'already-member',
});

/** Gives a membership another role, if it still has the one read (`membership-changed`). */
export const roleChangeWrite = (membership: MembershipItem, role: OrgRole): TransactItem => ({
  Update: {
    Key: membershipKeys.byId(membership.org_id, membership.user_id),
    UpdateExpression: 'SET #role = :role',
    ConditionExpression: roleUnchanged,
    ExpressionAttributeNames: ROLE,
    ExpressionAttributeValues: { ':role': role, ':current': membership.role },
  },
  reason: 'membership-changed',
});

/** Removes a membership, if it still has the role read (`membership-changed`). */
export const membershipRemovalWrite = (membership: MembershipItem): TransactItem => ({
  Delete: {
    Key: membershipKeys.byId(membership.org_id, membership.user_id),
    ConditionExpression: roleUnchanged,
    ExpressionAttributeNames: ROLE,
    ExpressionAttributeValues: { ':current': membership.role },
  },
  reason: 'membership-changed',
});

/** Removes a membership whatever its role: an erased account leaves every organization. */
export const membershipErasureWrite = (membership: MembershipItem): TransactItem => ({
  Delete: { Key: membershipKeys.byId(membership.org_id, membership.user_id) },
});

/**
 * For a transaction that demotes or removes an owner: the other owner it counts on is still an owner, so
 * two owners demoting each other at once cannot both win (`last-owner`).
 */
export const ownerRemainsCheck = (orgId: string, ownerId: number): TransactItem => ({
  ConditionCheck: {
    Key: membershipKeys.byId(orgId, ownerId),
    ConditionExpression: isOwner,
    ExpressionAttributeNames: ROLE,
    ExpressionAttributeValues: { ':owner': 'owner' },
  },
  reason: 'last-owner',
});
