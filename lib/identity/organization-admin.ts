import type { Principal, RequestContext } from '#lib/context';
import { randomBase62, randomToken, sha256 } from '#lib/crypto/secrets';
import { getMany } from '#lib/db/batch';
import { tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { claimUnique, itemExists, itemIsNew, releaseUnique, transact, uniqueKey } from '#lib/db/transactions';
import { ConflictError, ForbiddenError, NotFoundError } from '#lib/errors';
import { requirePrincipal, requireUser } from '#lib/identity/access';
import { epochSeconds, identityKeys, UNIQUE_ORG_SLUG } from '#lib/identity/keys';
import {
  getOrganizationItem,
  type MembershipItem,
  type OrganizationItem,
  organizationItems,
  slugify,
  toOrganization,
} from '#lib/identity/organizations';
import { type OrgRole, orgRoleAtLeast } from '#lib/identity/roles';
import { teamLeavingWrites } from '#lib/identity/team-leaving';
import { getUserItem, getUsersByIds, type UserItem, userIdByEmail } from '#lib/identity/users';

/**
 * Organizations, their members and their invites, as the `/organizations` routes manage them.
 *
 * Authorization is always against the organization named in the path, never the one the request acts
 * in: the caller's membership there decides. An instance admin counts as an admin of every
 * organization (never as its owner); an API key reaches only its own organization, its `admin` scope
 * counting as admin. An organization the caller cannot see answers 404, as records of another tenant do.
 */

export type Organization = ReturnType<typeof toOrganization>;

export interface Member {
  user_id: number;
  username: string;
  email: string;
  role: OrgRole;
  joined_at: string;
}

export type InviteStatus = 'pending' | 'accepted' | 'expired';

export interface Invite {
  id: string;
  email: string;
  role: OrgRole;
  status: InviteStatus;
  expires_at: string;
  created_at: string;
  invited_by: number | null;
}

/** How long an invite link stays valid. */
export const INVITE_VALID_DAYS = 7;
/** Accepted and expired invites stay listed as history this long before TTL removes them. */
const INVITE_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * An invite as stored under `T#<org>` / `INVITE#<id>`. `valid_until` is the invite's expiry as the API
 * shows it; `expires_at` is only the table's TTL (epoch seconds), set later so the history outlives it.
 */
interface InviteItem {
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

/** The lookup item under `INVITETOKEN#<sha256>`: the only place the token exists, and only as a hash. */
interface InviteTokenItem {
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

/**
 * Keys this module adds to lib/identity/keys: the guard that allows one active invite per address and
 * organization. It lives in the tenant's partition and carries the active invite's id and expiry.
 */
const inviteKeys = {
  activeInviteGuard: (orgId: string, email: string) => ({
    pk: tenantPk(orgId),
    sk: `INVITEFOR#${email.toLowerCase()}`,
  }),
};

const orgNotFound = () => new NotFoundError('Organization not found');
const memberNotFound = () => new NotFoundError('Member not found');
const userNotFound = () => new NotFoundError('User not found');
const inviteNotFound = () => new NotFoundError('Invite not found, expired or already used');
const alreadyMember = () =>
  new ConflictError('The user is already a member of this organization', [
    { path: 'body.user_id', message: 'is already a member' },
  ]);
const slugTaken = () =>
  new ConflictError('An organization with this slug exists', [{ path: 'body.slug', message: 'is taken' }]);
const lastOwner = () => new ConflictError('The organization’s last owner cannot be demoted or removed');
const changedMeanwhile = () => new ConflictError('The record was changed by another request; try again');

const ORG_LIVE = 'attribute_exists(pk) AND attribute_not_exists(deleted_at)';

// ---------------------------------------------------------------------------------------------------
// Access

interface OrgAccess {
  org: OrganizationItem;
  /** What the caller counts as in this organization (see the module comment). */
  role: OrgRole;
  principal: Principal;
}

const KEY_ROLE: Record<Principal['capability'], OrgRole> = {
  admin: 'admin',
  write: 'member',
  read: 'viewer',
};

/** The organization in the path and the caller's standing in it, or 404 when the caller cannot see it. */
async function accessOrg(ctx: RequestContext, orgId: string): Promise<OrgAccess> {
  const principal = requirePrincipal(ctx);
  if (principal.method === 'api_key') {
    if (orgId !== principal.orgId) throw orgNotFound();
    const org = await getOrganizationItem(orgId);
    if (!org) throw orgNotFound();
    return { org, role: KEY_ROLE[principal.capability], principal };
  }
  if (principal.userId === undefined) throw orgNotFound();
  const [org, membership] = await getMany<OrganizationItem | MembershipItem>([
    identityKeys.organization(orgId),
    identityKeys.membership(orgId, principal.userId),
  ]);
  const orgItem = org as OrganizationItem | undefined;
  if (!orgItem || orgItem.deleted_at) throw orgNotFound();
  const own = (membership as MembershipItem | undefined)?.role;
  if (principal.isInstanceAdmin) {
    return { org: orgItem, role: orgRoleAtLeast(own, 'admin') ? (own as OrgRole) : 'admin', principal };
  }
  if (!own) throw orgNotFound();
  return { org: orgItem, role: own, principal };
}

function requireRole(access: OrgAccess, minimum: OrgRole, action: string): void {
  if (!orgRoleAtLeast(access.role, minimum)) {
    throw new ForbiddenError(
      `Only an organization ${minimum}${minimum === 'owner' ? '' : ' or above'} can ${action}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// Organizations

/**
 * The organizations the calling user belongs to (an API key: its own), oldest first. Instance admins
 * see their own memberships too, not the whole instance.
 *
 * A user belongs to few organizations, so all memberships are read and the window cut afterwards: that
 * keeps `total` exact although soft-deleted organizations still have membership items.
 */
export async function listOrganizations(ctx: RequestContext, page: PageRequest): Promise<Page<Organization>> {
  const principal = requirePrincipal(ctx);
  let orgIds: string[];
  if (principal.method === 'api_key' || principal.userId === undefined) {
    orgIds = [principal.orgId];
  } else {
    const memberships = await queryPage<{ org_id: string }>(
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': identityKeys.membershipByUser(principal.userId, '').gsi1pk },
      },
      { limit: Number.MAX_SAFE_INTEGER, offset: 0 },
    );
    orgIds = memberships.items.map((membership) => membership.org_id);
  }
  const orgs = (await getMany<OrganizationItem>(orgIds.map((id) => identityKeys.organization(id))))
    .filter((org): org is OrganizationItem => org !== undefined && !org.deleted_at)
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return {
    items: orgs.slice(page.offset, page.offset + page.limit).map(toOrganization),
    total: orgs.length,
  };
}

/** How many numbered candidates (`slug-2`, `slug-3`, …) are read per round trip while looking for a free one. */
const SLUG_WINDOW = 25;
const SLUG_ROUNDS = 4;

/**
 * Creates an organization owned by the caller. An explicit slug that exists is 409; a generated one
 * (from the name) takes the first free of `slug`, `slug-2`, `slug-3`, … The guard claim in the create
 * transaction is what decides: the read only skips candidates known to be taken.
 */
export async function createOrganization(
  ctx: RequestContext,
  input: { name: string; slug?: string },
): Promise<Organization> {
  const principal = requireUser(ctx);
  const orgId = `org_${randomBase62(16)}`;
  const now = ctx.clock.now().toISOString();
  const create = async (slug: string) => {
    const org = organizationItems({
      orgId,
      name: input.name,
      slug,
      ownerId: principal.userId,
      now,
      tier: undefined,
      personal: false,
    });
    await transact(org.writes, { 0: slugTaken });
    return toOrganization(org.item);
  };
  if (input.slug !== undefined) return create(input.slug);

  const base = slugify(input.name);
  for (let round = 0; round < SLUG_ROUNDS; round += 1) {
    const candidates = Array.from({ length: SLUG_WINDOW }, (_, index) => {
      const n = round * SLUG_WINDOW + index + 1;
      return n === 1 ? base : `${base}-${n}`;
    });
    const guards = await getMany(candidates.map((slug) => uniqueKey(UNIQUE_ORG_SLUG, slug)));
    for (const [index, slug] of candidates.entries()) {
      if (guards[index]) continue;
      try {
        return await create(slug);
      } catch (error) {
        // Another request claimed it between the read and the write: try the next number.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
  }
  // So many numbered variants are taken that counting on is pointless; a random suffix is free.
  return create(`${base}-${randomBase62(6).toLowerCase()}`);
}

/** One organization the caller can see, with its member count. */
export async function getOrganization(ctx: RequestContext, orgId: string): Promise<Organization> {
  const { org } = await accessOrg(ctx, orgId);
  return toOrganization(org);
}

export interface OrganizationChanges {
  name?: string;
  slug?: string;
  avatar_url?: string | null;
}

/**
 * Renames or re-slugs an organization (admin or above there). A new slug moves the uniqueness guard in
 * the same transaction as the record; the record's condition on the old slug keeps two concurrent
 * renames from leaving a guard behind.
 */
export async function updateOrganization(
  ctx: RequestContext,
  orgId: string,
  changes: OrganizationChanges,
): Promise<Organization> {
  const access = await accessOrg(ctx, orgId);
  requireRole(access, 'admin', 'change the organization');
  const { org } = access;
  const now = ctx.clock.now().toISOString();
  const next: OrganizationItem = {
    ...org,
    name: changes.name ?? org.name,
    slug: changes.slug ?? org.slug,
    avatar_url: changes.avatar_url === undefined ? (org.avatar_url ?? null) : changes.avatar_url,
    updated_at: now,
  };
  const slugMoves = next.slug.toLowerCase() !== org.slug.toLowerCase();
  const guardWrites = slugMoves
    ? [claimUnique(UNIQUE_ORG_SLUG, next.slug, orgId), releaseUnique(UNIQUE_ORG_SLUG, org.slug)]
    : [];
  await transact(
    [
      ...guardWrites,
      {
        Update: {
          Key: identityKeys.organization(orgId),
          UpdateExpression: 'SET #name = :name, slug = :slug, avatar_url = :avatar, updated_at = :now',
          ConditionExpression: `${ORG_LIVE} AND slug = :oldSlug`,
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: {
            ':name': next.name,
            ':slug': next.slug,
            ':avatar': next.avatar_url,
            ':now': now,
            ':oldSlug': org.slug,
          },
        },
      },
    ],
    slugMoves ? { 0: slugTaken } : {},
  );
  return toOrganization(next);
}

/**
 * Soft-deletes an organization (owners only): the record stays with `deleted_at` and disappears from
 * every read, and its slug is released for reuse in the same transaction. A personal organization goes
 * only with its user's account, since logging in lands there.
 */
export async function deleteOrganization(
  ctx: RequestContext,
  orgId: string,
): Promise<{ id: string; deleted_at: string }> {
  const access = await accessOrg(ctx, orgId);
  requireRole(access, 'owner', 'delete the organization');
  if (access.org.personal) {
    throw new ConflictError('A personal organization cannot be deleted; it goes with its user’s account');
  }
  const now = ctx.clock.now().toISOString();
  await transact(
    [
      {
        Update: {
          Key: identityKeys.organization(orgId),
          UpdateExpression: 'SET deleted_at = :now, updated_at = :now',
          ConditionExpression: ORG_LIVE,
          ExpressionAttributeValues: { ':now': now },
        },
      },
      releaseUnique(UNIQUE_ORG_SLUG, access.org.slug),
    ],
    { 0: orgNotFound },
  );
  return { id: orgId, deleted_at: now };
}

// ---------------------------------------------------------------------------------------------------
// Members

const toMember = (membership: MembershipItem, user: Pick<UserItem, 'username' | 'email'>): Member => ({
  user_id: membership.user_id,
  username: user.username,
  email: user.email,
  role: membership.role,
  joined_at: membership.joined_at,
});

/** The members of an organization the caller can see, by user id. */
export async function listMembers(
  ctx: RequestContext,
  orgId: string,
  page: PageRequest,
): Promise<Page<Member>> {
  await accessOrg(ctx, orgId);
  const memberships = await queryPage<MembershipItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :member)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':member': 'MEMBER#' },
    },
    page,
  );
  const users = new Map(
    (await getUsersByIds(memberships.items.map((membership) => membership.user_id))).map((user) => [
      user.id,
      user,
    ]),
  );
  // A user erased in the meantime takes their memberships along; until then they are skipped here.
  const items = memberships.items.flatMap((membership) => {
    const user = users.get(membership.user_id);
    return user ? [toMember(membership, user)] : [];
  });
  return { items, total: memberships.total };
}

const membershipWrite = (orgId: string, userId: number, role: OrgRole, now: string) => ({
  Put: {
    Item: {
      ...identityKeys.membership(orgId, userId),
      ...identityKeys.membershipByUser(userId, orgId),
      org_id: orgId,
      user_id: userId,
      role,
      joined_at: now,
    } satisfies MembershipItem & Record<string, unknown>,
    ConditionExpression: itemIsNew,
  },
});

const memberCountChange = (orgId: string, delta: 1 | -1) => ({
  Update: {
    Key: identityKeys.organization(orgId),
    UpdateExpression: 'ADD member_count :delta',
    ConditionExpression: ORG_LIVE,
    ExpressionAttributeValues: { ':delta': delta },
  },
});

const userStillExists = (userId: number) => ({
  ConditionCheck: { Key: identityKeys.user(userId), ConditionExpression: itemExists },
});

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
  const now = ctx.clock.now().toISOString();
  const membership = membershipWrite(orgId, input.userId, input.role, now);
  await transact([membership, memberCountChange(orgId, 1), userStillExists(input.userId)], {
    0: alreadyMember,
    1: orgNotFound,
    2: userNotFound,
  });
  return toMember(membership.Put.Item, user);
}

/**
 * Another owner than `userId`, if there is one. Demoting or removing an owner checks in its transaction
 * that this other owner is still an owner, so two owners demoting each other at once cannot both win.
 */
async function anotherOwner(orgId: string, userId: number): Promise<number | undefined> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :member)',
      FilterExpression: '#role = :owner AND user_id <> :user',
      ExpressionAttributeNames: { '#role': 'role' },
      ExpressionAttributeValues: {
        ':pk': tenantPk(orgId),
        ':member': 'MEMBER#',
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

async function ownerSuccessionCheck(orgId: string, userId: number) {
  const other = await anotherOwner(orgId, userId);
  if (other === undefined) throw lastOwner();
  return {
    ConditionCheck: {
      Key: identityKeys.membership(orgId, other),
      ConditionExpression: '#role = :owner',
      ExpressionAttributeNames: { '#role': 'role' },
      ExpressionAttributeValues: { ':owner': 'owner' },
    },
  };
}

async function getMembershipOf(orgId: string, userId: number): Promise<MembershipItem> {
  const result = await table.get({ Key: identityKeys.membership(orgId, userId), ConsistentRead: true });
  if (!result.Item) throw memberNotFound();
  return result.Item as MembershipItem;
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
  await transact(
    [
      {
        Update: {
          Key: identityKeys.membership(orgId, userId),
          UpdateExpression: 'SET #role = :role',
          ConditionExpression: 'attribute_exists(pk) AND #role = :current',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':role': role, ':current': membership.role },
        },
      },
      ...succession,
    ],
    { 0: changedMeanwhile, 1: lastOwner },
  );
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
  await transact(
    [
      {
        Delete: {
          Key: identityKeys.membership(orgId, userId),
          ConditionExpression: 'attribute_exists(pk) AND #role = :current',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':current': membership.role },
        },
      },
      memberCountChange(orgId, -1),
      ...succession,
      ...teams,
    ],
    succession.length > 0
      ? { 0: changedMeanwhile, 1: orgNotFound, 2: lastOwner }
      : { 0: changedMeanwhile, 1: orgNotFound },
  );
  return { organization_id: orgId, user_id: userId };
}

// ---------------------------------------------------------------------------------------------------
// Invites

const inviteStatus = (item: InviteItem, now: Date): InviteStatus => {
  if (item.accepted_at) return 'accepted';
  return item.valid_until > now.toISOString() ? 'pending' : 'expired';
};

const toInvite = (item: InviteItem, now: Date): Invite => ({
  id: item.id,
  email: item.email,
  role: item.role,
  status: inviteStatus(item, now),
  expires_at: item.valid_until,
  created_at: item.created_at,
  invited_by: item.invited_by ?? null,
});

/** Invite ids start with their creation time, so the tenant's `INVITE#` range lists oldest first. */
const newInviteId = (now: Date): string =>
  `inv_${now.getTime().toString(36).padStart(9, '0')}${randomBase62(10)}`;

/** The pending invites of an organization the caller can see (never their tokens), oldest first. */
export async function listInvites(
  ctx: RequestContext,
  orgId: string,
  page: PageRequest,
): Promise<Page<Invite>> {
  await accessOrg(ctx, orgId);
  const now = ctx.clock.now();
  const result = await queryPage<InviteItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :invite)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':invite': 'INVITE#' },
    },
    page,
    (item) => inviteStatus(item, now) === 'pending',
  );
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
  if (existingUser !== undefined) {
    const membership = await table.get({ Key: identityKeys.membership(orgId, existingUser) });
    if (membership.Item) {
      throw new ConflictError('This address belongs to a member already', [
        { path: 'body.email', message: 'is already a member' },
      ]);
    }
  }

  const now = ctx.clock.now();
  const createdAt = now.toISOString();
  const validUntil = new Date(now.getTime() + INVITE_VALID_DAYS * DAY_MS);
  const validUntilIso = validUntil.toISOString();
  const token = randomToken(32);
  const inviteId = newInviteId(now);
  const invite: InviteItem = {
    ...identityKeys.invite(orgId, inviteId),
    id: inviteId,
    org_id: orgId,
    email: input.email,
    role: input.role,
    invited_by: access.principal.userId ?? null,
    created_at: createdAt,
    valid_until: validUntilIso,
    expires_at: epochSeconds(validUntil) + INVITE_RETENTION_DAYS * 86_400,
  };
  const tokenItem: InviteTokenItem = {
    ...identityKeys.inviteToken(sha256(token)),
    org_id: orgId,
    invite_id: invite.id,
    email: input.email,
    role: input.role,
    valid_until: validUntilIso,
    expires_at: epochSeconds(validUntil),
  };
  const guardKey = inviteKeys.activeInviteGuard(orgId, input.email);
  await transact(
    [
      {
        Put: {
          Item: {
            ...guardKey,
            invite_id: invite.id,
            valid_until: validUntilIso,
            expires_at: epochSeconds(validUntil),
          },
          ConditionExpression: 'attribute_not_exists(pk) OR valid_until <= :now',
          ExpressionAttributeValues: { ':now': createdAt },
        },
      },
      { Put: { Item: invite, ConditionExpression: itemIsNew } },
      { Put: { Item: tokenItem, ConditionExpression: itemIsNew } },
      {
        ConditionCheck: {
          Key: identityKeys.organization(orgId),
          ConditionExpression: ORG_LIVE,
        },
      },
    ],
    {
      0: () =>
        new ConflictError('An active invite exists for this address', [
          { path: 'body.email', message: 'has an active invite' },
        ]),
      3: orgNotFound,
    },
  );

  const link = `${ctx.baseUrl}/organizations/invites/${encodeURIComponent(token)}/accept`;
  try {
    await ctx.email.send({
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
    await transact([
      { Delete: { Key: guardKey } },
      { Delete: { Key: { pk: invite.pk, sk: invite.sk } } },
      { Delete: { Key: { pk: tokenItem.pk, sk: tokenItem.sk } } },
    ]).catch(() => undefined);
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
export async function acceptInviteForUser(
  ctx: RequestContext,
  token: string,
  userId: number,
): Promise<AcceptedInvite> {
  const tokenKey = identityKeys.inviteToken(sha256(token));
  const found = await table.get({ Key: tokenKey, ConsistentRead: true });
  const item = found.Item as InviteTokenItem | undefined;
  const now = ctx.clock.now().toISOString();
  // TTL removes expired items lazily, so an item that is still there may be past its time.
  if (!item || item.valid_until <= now) throw inviteNotFound();
  const [org, user] = await Promise.all([getOrganizationItem(item.org_id), getUserItem(userId)]);
  if (!org) throw inviteNotFound();
  if (!user) throw userNotFound();

  const invite = identityKeys.invite(item.org_id, item.invite_id);
  const membership = membershipWrite(item.org_id, userId, item.role, now);
  await transact(
    [
      {
        Delete: {
          Key: tokenKey,
          ConditionExpression: 'attribute_exists(pk) AND valid_until > :now',
          ExpressionAttributeValues: { ':now': now },
        },
      },
      {
        Update: {
          Key: invite,
          UpdateExpression: 'SET accepted_at = :now, accepted_by = :user',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(accepted_at)',
          ExpressionAttributeValues: { ':now': now, ':user': userId },
        },
      },
      {
        Delete: {
          Key: inviteKeys.activeInviteGuard(item.org_id, item.email),
          ConditionExpression: 'attribute_not_exists(pk) OR invite_id = :invite',
          ExpressionAttributeValues: { ':invite': item.invite_id },
        },
      },
      membership,
      memberCountChange(item.org_id, 1),
      userStillExists(userId),
    ],
    {
      0: inviteNotFound,
      1: inviteNotFound,
      2: inviteNotFound,
      3: alreadyMember,
      4: inviteNotFound,
      5: userNotFound,
    },
  );
  return {
    organization: toOrganization({ ...org, member_count: org.member_count + 1 }),
    member: toMember(membership.Put.Item, user),
  };
}
