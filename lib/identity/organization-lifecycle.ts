import { randomBase62 } from '#lib/crypto/secrets';
import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { ConflictError } from '#lib/errors';
import { requirePrincipal, requireUser } from '#lib/identity/access';
import { listMembershipsOfUser } from '#lib/identity/memberships';
import { accessOrg, orgNotFound, requireRole } from '#lib/identity/organization-access';
import {
  getOrganizationItems,
  newOrganizationWrites,
  type Organization,
  type OrganizationItem,
  organizationChangeWrites,
  organizationDeletionWrites,
  slugify,
  takenSlugs,
  toOrganization,
} from '#lib/identity/organizations';
import type { RequestContext } from '#lib/kernel/context';

/** Organizations as the `/organizations` routes list, create, show, change and delete them. */

const slugTaken = () =>
  new ConflictError('An organization with this slug exists', [{ path: 'slug', message: 'is taken' }]);

/**
 * The organizations the calling user belongs to (an API key: its own), oldest first. Instance admins
 * see their own memberships too, not the whole instance.
 *
 * A user belongs to few organizations, so all memberships are read and the window cut afterwards: that
 * keeps `total` exact although soft-deleted organizations still have membership items.
 */
export async function listOrganizations(ctx: RequestContext, page: PageRequest): Promise<Page<Organization>> {
  const principal = requirePrincipal(ctx);
  const orgIds =
    principal.method === 'api_key' || principal.userId === undefined
      ? [principal.orgId]
      : (await listMembershipsOfUser(principal.userId)).map((membership) => membership.org_id);
  const orgs = (await getOrganizationItems(orgIds)).sort(
    (a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
  );
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
  const now = ctx.ports.clock.now().toISOString();
  const create = async (slug: string) => {
    const org = newOrganizationWrites({
      orgId,
      name: input.name,
      slug,
      ownerId: principal.userId,
      now,
      tier: undefined,
      personal: false,
    });
    await transact(org.writes, { 'slug-taken': slugTaken });
    return toOrganization(org.item);
  };
  if (input.slug !== undefined) return create(input.slug);

  const base = slugify(input.name);
  for (let round = 0; round < SLUG_ROUNDS; round += 1) {
    const candidates = Array.from({ length: SLUG_WINDOW }, (_, index) => {
      const n = round * SLUG_WINDOW + index + 1;
      return n === 1 ? base : `${base}-${n}`;
    });
    const taken = await takenSlugs(candidates);
    for (const [index, slug] of candidates.entries()) {
      if (taken[index]) continue;
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
  const next: OrganizationItem = {
    ...org,
    name: changes.name ?? org.name,
    slug: changes.slug ?? org.slug,
    avatar_url: changes.avatar_url === undefined ? (org.avatar_url ?? null) : changes.avatar_url,
    updated_at: ctx.ports.clock.now().toISOString(),
  };
  await transact(organizationChangeWrites(org, next), { 'slug-taken': slugTaken });
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
  const now = ctx.ports.clock.now().toISOString();
  await transact(organizationDeletionWrites(access.org, now), { 'organization-missing': orgNotFound });
  return { id: orgId, deleted_at: now };
}
