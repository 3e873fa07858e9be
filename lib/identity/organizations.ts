import { SIGNUP_BONUS_TOKENS } from '#lib/billing/catalogue';
import { config, type Tier } from '#lib/config';
import { getMany } from '#lib/db/batch';
import { allOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { type TableKey, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { claimUnique, releaseUnique, type TransactItem, uniqueKey } from '#lib/db/transactions';
import { type MembershipItem, membershipItem, membershipKeys } from '#lib/identity/memberships';
import { instanceTotalsWrite } from '#lib/metrics/metric-records';
import { ledgerWrites } from '#lib/tokens/ledger';

const SLUG_SCOPE = 'org-slug';

/**
 * Organizations (tenants) as stored. Everything a tenant owns lives in its partition `T#<org>`.
 *
 * | record | pk | sk | indexes |
 * |---|---|---|---|
 * | organization | `T#<org>` | `ORG` | gsi1: `ORGS` / `ORG#<created>#<org>` |
 * | slug guard | `UNIQUE#org-slug#<slug lowercased>` | `UNIQUE` | `owner`: the organization id |
 *
 * Deleting an organization keeps its record with `deleted_at`; from then on it is absent from every read.
 * Reasons an organization write is refused with: `slug-taken`, `organization-missing` (absent or
 * deleted), `organization-changed` (renamed meanwhile) and `organization-exists` (a new id is in use).
 */
export const organizationKeys = {
  byId: (orgId: string): TableKey => ({ pk: tenantPk(orgId), sk: 'ORG' }),
  allOrganizationsIndex: (createdAt: string, orgId: string) => ({
    gsi1pk: 'ORGS',
    gsi1sk: `ORG#${createdAt}#${orgId}`,
  }),
  slugGuard: (slug: string): TableKey => uniqueKey(SLUG_SCOPE, slug),
};

/** An organization as stored under `T#<org>` / `ORG`. */
export interface OrganizationItem {
  pk: string;
  sk: string;
  gsi1pk: string;
  gsi1sk: string;
  id: string;
  name: string;
  slug: string;
  avatar_url: string | null;
  owner_id: number;
  tier: Tier;
  /** Changed in the transaction of every membership write. */
  member_count: number;
  personal: boolean;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
  /** Counted in the instance's `organizations` total (lib/metrics) since its creation. */
  counted?: boolean;
}

/** The organization record of the API. */
export type Organization = Omit<OrganizationItem, 'pk' | 'sk' | 'gsi1pk' | 'gsi1sk' | 'deleted_at'>;

export const toOrganization = (item: OrganizationItem): Organization => ({
  id: item.id,
  name: item.name,
  slug: item.slug,
  avatar_url: item.avatar_url ?? null,
  owner_id: item.owner_id,
  tier: item.tier,
  member_count: item.member_count,
  personal: item.personal,
  created_at: item.created_at,
  updated_at: item.updated_at,
});

/** The organization exists and has not been deleted: every write that adds to one checks this. */
export const organizationLive = allOf(itemExists, 'attribute_not_exists(deleted_at)');
/** The slug is still the one read (`:oldSlug`), so two concurrent renames cannot leave a guard behind. */
const slugUnchanged = 'slug = :oldSlug';
const countMembers = 'ADD member_count :delta';

/** A slug from free text: lowercase, runs of other characters become `-`. */
export function slugify(text: string): string {
  const slug = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return slug || 'org';
}

export const personalOrgSlug = (username: string): string => slugify(username);

/** An organization that exists and is not deleted. */
export async function getOrganizationItem(orgId: string): Promise<OrganizationItem | undefined> {
  const result = await table.get({ Key: organizationKeys.byId(orgId) });
  const item = result.Item as OrganizationItem | undefined;
  return item && !item.deleted_at ? item : undefined;
}

/** The organizations of these ids that exist and are not deleted, in no particular order. */
export async function getOrganizationItems(orgIds: string[]): Promise<OrganizationItem[]> {
  const items = await getMany<OrganizationItem>(orgIds.map((id) => organizationKeys.byId(id)));
  return items.filter((org): org is OrganizationItem => org !== undefined && !org.deleted_at);
}

/**
 * A live organization and the user's membership in it, in one batch read: what deciding on a request
 * against the organization in the path needs.
 */
export async function getOrganizationWithMembership(
  orgId: string,
  userId: number,
): Promise<{ org: OrganizationItem | undefined; membership: MembershipItem | undefined }> {
  const [org, membership] = await getMany<OrganizationItem | MembershipItem>([
    organizationKeys.byId(orgId),
    membershipKeys.byId(orgId, userId),
  ]);
  const orgItem = org as OrganizationItem | undefined;
  return {
    org: orgItem && !orgItem.deleted_at ? orgItem : undefined,
    membership: membership as MembershipItem | undefined,
  };
}

/** Which of these slugs are taken, by one batch read of their guards. */
export async function takenSlugs(slugs: string[]): Promise<boolean[]> {
  const guards = await getMany(slugs.map((slug) => organizationKeys.slugGuard(slug)));
  return guards.map((guard) => guard !== undefined);
}

/**
 * The writes that create an organization with its owner: the slug guard (`slug-taken`), the record, the
 * owner's membership and the signup bonus. Callers put them in their own transaction.
 */
export function newOrganizationWrites(input: {
  orgId: string;
  name: string;
  slug: string;
  ownerId: number;
  now: string;
  tier: Tier | undefined;
  personal?: boolean;
}): { item: OrganizationItem; writes: TransactItem[] } {
  const item: OrganizationItem = {
    ...organizationKeys.byId(input.orgId),
    ...organizationKeys.allOrganizationsIndex(input.now, input.orgId),
    id: input.orgId,
    name: input.name,
    slug: input.slug,
    avatar_url: null,
    owner_id: input.ownerId,
    tier: input.tier ?? config.defaultTier,
    member_count: 1,
    personal: input.personal ?? true,
    created_at: input.now,
    updated_at: input.now,
    counted: true,
  };
  const owner = membershipItem({ orgId: input.orgId, userId: input.ownerId, role: 'owner', now: input.now });
  return {
    item,
    writes: [
      claimUnique(SLUG_SCOPE, input.slug, input.orgId, 'slug-taken'),
      { Put: { Item: item, ConditionExpression: itemIsNew }, reason: 'organization-exists' },
      { Put: { Item: owner } },
      instanceTotalsWrite({ organizations: 1 }),
      // Every new organization starts with the signup bonus, created with it or not at all.
      ...ledgerWrites({
        orgId: input.orgId,
        type: 'signup_bonus',
        amount: SIGNUP_BONUS_TOKENS,
        action: 'signup_bonus',
        actor: 'system',
        now: new Date(input.now),
        balanceBefore: 0,
      }).writes,
    ],
  };
}

/**
 * The writes that rename, re-slug or re-avatar an organization. A new slug (other than by case) moves
 * the guard (`slug-taken`); the record must still be live and carry the slug that was read
 * (`organization-changed`).
 */
export function organizationChangeWrites(before: OrganizationItem, after: OrganizationItem): TransactItem[] {
  const slugMoves = after.slug.toLowerCase() !== before.slug.toLowerCase();
  return [
    ...(slugMoves
      ? [claimUnique(SLUG_SCOPE, after.slug, before.id, 'slug-taken'), releaseUnique(SLUG_SCOPE, before.slug)]
      : []),
    {
      Update: {
        Key: organizationKeys.byId(before.id),
        UpdateExpression: 'SET #name = :name, slug = :slug, avatar_url = :avatar, updated_at = :now',
        ConditionExpression: allOf(organizationLive, slugUnchanged),
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: {
          ':name': after.name,
          ':slug': after.slug,
          ':avatar': after.avatar_url,
          ':now': after.updated_at,
          ':oldSlug': before.slug,
        },
      },
      reason: 'organization-changed',
    },
  ];
}

/** The writes that soft-delete a live organization (`organization-missing`) and free its slug. */
export const organizationDeletionWrites = (org: OrganizationItem, now: string): TransactItem[] => [
  {
    Update: {
      Key: organizationKeys.byId(org.id),
      UpdateExpression: 'SET deleted_at = :now, updated_at = :now',
      ConditionExpression: organizationLive,
      ExpressionAttributeValues: { ':now': now },
    },
    reason: 'organization-missing',
  },
  releaseUnique(SLUG_SCOPE, org.slug),
  ...(org.counted ? [instanceTotalsWrite({ organizations: -1 })] : []),
];

/**
 * The writes that close a personal organization along with its owner's account: marked deleted
 * unconditionally (the account's erasure must not stall on it), its slug free again.
 */
export const personalOrganizationClosingWrites = (org: OrganizationItem, at: string): TransactItem[] => [
  {
    Update: {
      Key: organizationKeys.byId(org.id),
      UpdateExpression: 'SET deleted_at = :now',
      ExpressionAttributeValues: { ':now': at },
    },
  },
  releaseUnique(SLUG_SCOPE, org.slug),
];

/** The member count's share of a membership write; refused with `organization-missing` once it is deleted. */
export const memberCountChange = (orgId: string, delta: 1 | -1): TransactItem => ({
  Update: {
    Key: organizationKeys.byId(orgId),
    UpdateExpression: countMembers,
    ConditionExpression: organizationLive,
    ExpressionAttributeValues: { ':delta': delta },
  },
  reason: 'organization-missing',
});

/**
 * The member count's share of erasing a member's account: deleted organizations count down too, so that
 * an erasure never stalls on one.
 */
export const erasedMemberCount = (orgId: string): TransactItem => ({
  Update: {
    Key: organizationKeys.byId(orgId),
    UpdateExpression: countMembers,
    ConditionExpression: itemExists,
    ExpressionAttributeValues: { ':delta': -1 },
  },
});

/**
 * Runs `work` on every organization, deleted ones too (through the organizations index, not a Scan), one
 * after another, and adds up the counts each answers; `organizations` says how many there were. For data
 * moves that go organization by organization (infra/migrations).
 *
 * @example
 * await sumOverOrganizations((orgId) => moveLegacyLinks(orgId), { moved: 0, dropped: 0 });
 */
export async function sumOverOrganizations<T extends Record<string, number>>(
  work: (orgId: string) => Promise<T>,
  zero: T,
): Promise<T & { organizations: number }> {
  const total: Record<string, number> = { ...zero, organizations: 0 };
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :orgs',
      ExpressionAttributeValues: { ':orgs': 'ORGS' },
      ProjectionExpression: 'id',
      ExclusiveStartKey: startKey,
    });
    for (const org of page.Items ?? []) {
      const counts = await work(String(org.id));
      for (const name of Object.keys(zero)) total[name] = (total[name] ?? 0) + (counts[name] ?? 0);
      total.organizations = (total.organizations ?? 0) + 1;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return total as T & { organizations: number };
}
