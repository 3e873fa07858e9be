import { SIGNUP_BONUS_TOKENS } from '#lib/billing/catalogue';
import type { Tier } from '#lib/config';
import { config } from '#lib/config';
import { table } from '#lib/db/table';
import { claimUnique } from '#lib/db/transactions';
import { identityKeys, UNIQUE_ORG_SLUG } from '#lib/identity/keys';
import type { OrgRole } from '#lib/identity/roles';
import { ledgerWrites } from '#lib/tokens/ledger';

/** An organization (tenant) as stored under `T#<org>` / `ORG`. */
export interface OrganizationItem {
  pk: string;
  sk: string;
  id: string;
  name: string;
  slug: string;
  avatar_url: string | null;
  owner_id: number;
  tier: Tier;
  member_count: number;
  personal: boolean;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
}

export interface MembershipItem {
  pk: string;
  sk: string;
  org_id: string;
  user_id: number;
  role: OrgRole;
  joined_at: string;
}

/** The organization record of the API. */
export const toOrganization = (item: OrganizationItem) => ({
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

/**
 * The writes that create an organization with its owner: the record (with its slug guard) and the
 * owner's membership. Callers put them in their own transaction. Index 1 of `writes` is the record.
 */
export function organizationItems(input: {
  orgId: string;
  name: string;
  slug: string;
  ownerId: number;
  now: string;
  tier: Tier | undefined;
  personal?: boolean;
}) {
  const item: OrganizationItem = {
    ...identityKeys.organization(input.orgId),
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
  };
  const membership: MembershipItem = {
    ...identityKeys.membership(input.orgId, input.ownerId),
    org_id: input.orgId,
    user_id: input.ownerId,
    role: 'owner',
    joined_at: input.now,
  };
  return {
    item,
    writes: [
      claimUnique(UNIQUE_ORG_SLUG, input.slug, input.orgId),
      {
        Put: {
          Item: { ...item, ...identityKeys.organizationsIndex(input.now, input.orgId) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          Item: { ...membership, ...identityKeys.membershipByUser(input.ownerId, input.orgId) },
        },
      },
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

export async function getOrganizationItem(orgId: string): Promise<OrganizationItem | undefined> {
  const result = await table.get({ Key: identityKeys.organization(orgId) });
  const item = result.Item as OrganizationItem | undefined;
  return item && !item.deleted_at ? item : undefined;
}

export async function getMembership(orgId: string, userId: number): Promise<MembershipItem | undefined> {
  const result = await table.get({ Key: identityKeys.membership(orgId, userId) });
  return result.Item as MembershipItem | undefined;
}
