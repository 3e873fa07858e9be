import { ForbiddenError, NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import { type ApiKeyItem, getLiveApiKey } from '#lib/identity/api-key-records';
import { accessOrg, orgNotFound } from '#lib/identity/organization-access';
import { orgRoleAtLeast } from '#lib/identity/roles';
import type { Principal, RequestContext } from '#lib/kernel/context';

/** Who may manage an organization's API keys, and the key a route names. */

const keyNotFound = () => new NotFoundError('API key not found');

/**
 * The caller may manage the keys of the organization in the path: an owner or admin of it (an instance
 * admin counts as one), or an API key of that very organization with the `admin` scope. Keys are
 * credentials, so even reading them needs admin. An organization the caller is not in answers 404, as
 * every record of another tenant does.
 */
export async function requireKeyManager(ctx: RequestContext, orgId: string): Promise<Principal> {
  const principal = requirePrincipal(ctx);
  if (principal.method === 'api_key') {
    if (principal.orgId !== orgId) throw orgNotFound();
    if (principal.capability !== 'admin') throw new ForbiddenError('Managing API keys needs the admin scope');
    return principal;
  }
  const access = await accessOrg(ctx, orgId);
  if (!orgRoleAtLeast(access.role, 'admin')) {
    throw new ForbiddenError('Managing API keys needs the admin or owner role in the organization');
  }
  return principal;
}

/** A key of the organization that is not deleted, or 404. */
export async function loadKey(orgId: string, keyId: string): Promise<ApiKeyItem> {
  const item = await getLiveApiKey(orgId, keyId);
  if (!item) throw keyNotFound();
  return item;
}
