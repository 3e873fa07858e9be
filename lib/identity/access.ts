import { ForbiddenError, UnauthorizedError } from '#lib/errors';
import { type OrgRole, orgRoleAtLeast } from '#lib/identity/roles';
import type { Principal, RequestContext } from '#lib/kernel/context';

/** The caller of a bearer route; the authentication middleware guarantees one. */
export function requirePrincipal(ctx: RequestContext): Principal {
  if (!ctx.principal) throw new UnauthorizedError();
  return ctx.principal;
}

export type UserPrincipal = Principal & { userId: number };

/**
 * The caller, who must be a user. An API key is a valid credential without the permission (403), not a
 * malformed request: nothing the caller could change in the request would make it pass.
 */
export function requireUser(ctx: RequestContext): UserPrincipal {
  const principal = requirePrincipal(ctx);
  if (principal.userId === undefined) {
    throw new ForbiddenError('This operation needs a user; the API key has no user behind it');
  }
  return principal as UserPrincipal;
}

/**
 * The caller must hold at least `minimum` in the active organization. Instance admins and API keys with
 * the `admin` scope count as organization admins; only a real owner counts as owner.
 */
export function requireOrgRole(ctx: RequestContext, minimum: OrgRole): Principal {
  const principal = requirePrincipal(ctx);
  const effective: OrgRole | undefined =
    principal.orgRole ?? (principal.method === 'api_key' && principal.capability === 'admin' ? 'admin' : undefined);
  const asAdmin = principal.isInstanceAdmin && minimum !== 'owner';
  if (!asAdmin && !orgRoleAtLeast(effective, minimum)) {
    throw new ForbiddenError(`This needs the ${minimum} role in the organization`);
  }
  return principal;
}

/** Whether the caller holds at least `minimum` in the active organization, by the same rule. */
export function hasOrgRole(ctx: RequestContext, minimum: OrgRole): boolean {
  try {
    requireOrgRole(ctx, minimum);
    return true;
  } catch (error) {
    if (error instanceof ForbiddenError) return false;
    throw error;
  }
}
