import { ForbiddenError, NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import { getOrganizationItem, getOrganizationWithMembership, type OrganizationItem } from '#lib/identity/organizations';
import { type OrgRole, orgRoleAtLeast } from '#lib/identity/roles';
import type { Principal, RequestContext } from '#lib/kernel/context';

/**
 * Authorization against the organization named in the path, never the one the request acts in: the
 * caller's membership there decides. An instance admin counts as an admin of every organization (never
 * as its owner); an API key reaches only its own organization, its `admin` scope counting as admin. An
 * organization the caller cannot see answers 404, as records of another tenant do.
 */
export const orgNotFound = () => new NotFoundError('Organization not found');

export interface OrgAccess {
  org: OrganizationItem;
  /** What the caller counts as in this organization (see above). */
  role: OrgRole;
  principal: Principal;
}

const KEY_ROLE: Record<Principal['capability'], OrgRole> = {
  admin: 'admin',
  write: 'member',
  read: 'viewer',
};

/** The organization in the path and the caller's standing in it, or 404 when the caller cannot see it. */
export async function accessOrg(ctx: RequestContext, orgId: string): Promise<OrgAccess> {
  const principal = requirePrincipal(ctx);
  if (principal.method === 'api_key') {
    if (orgId !== principal.orgId) throw orgNotFound();
    const org = await getOrganizationItem(orgId);
    if (!org) throw orgNotFound();
    return { org, role: KEY_ROLE[principal.capability], principal };
  }
  if (principal.userId === undefined) throw orgNotFound();
  const { org, membership } = await getOrganizationWithMembership(orgId, principal.userId);
  if (!org) throw orgNotFound();
  const own = membership?.role;
  if (principal.isInstanceAdmin) {
    return { org, role: orgRoleAtLeast(own, 'admin') ? (own as OrgRole) : 'admin', principal };
  }
  if (!own) throw orgNotFound();
  return { org, role: own, principal };
}

export function requireRole(access: OrgAccess, minimum: OrgRole, action: string): void {
  if (!orgRoleAtLeast(access.role, minimum)) {
    throw new ForbiddenError(`Only an organization ${minimum}${minimum === 'owner' ? '' : ' or above'} can ${action}`);
  }
}
