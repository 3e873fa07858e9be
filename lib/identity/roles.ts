import type { Capability, OrgRole } from '#lib/kernel/context';

/**
 * Roles and what they may do. A request needs a capability: `read` (GET), `write` (other methods) or
 * `admin` (routes that say so). A user's capability in an organization is the lesser of what their
 * instance role and their organization role allow; an API key's is the highest of its scopes.
 */

/** Instance roles a user record may carry (values given on update are stored as given). */
export const USER_ROLES = ['admin', 'member', 'viewer', 'editor', 'builder', 'agent', 'demo'] as const;
export type UserRole = (typeof USER_ROLES)[number];
/** Values PATCH /users/{id} accepts. */
export const UPDATABLE_USER_ROLES = ['admin', 'editor', 'viewer', 'builder', 'agent', 'demo'] as const;

export const ORG_ROLES = ['owner', 'admin', 'member', 'viewer'] as const satisfies readonly OrgRole[];
export type { OrgRole };

export const TEAM_ROLES = ['owner', 'admin', 'member'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/** The kernel names capabilities (a principal carries one); API key scopes are the same three words. */
export const SCOPES = ['read', 'write', 'admin'] as const satisfies readonly Capability[];
export type Scope = Capability;
export type { Capability };

const RANK: Record<Capability, number> = { read: 1, write: 2, admin: 3 };

export const allows = (held: Capability, needed: Capability): boolean => RANK[held] >= RANK[needed];

export const lesser = (a: Capability, b: Capability): Capability => (RANK[a] <= RANK[b] ? a : b);

export function capabilityOfUserRole(role: string): Capability {
  if (role === 'admin') return 'admin';
  if (role === 'viewer' || role === 'demo') return 'read';
  return 'write';
}

export function capabilityOfOrgRole(role: OrgRole): Capability {
  if (role === 'owner' || role === 'admin') return 'admin';
  return role === 'member' ? 'write' : 'read';
}

/** The highest capability among scopes; `write` implies `read`, `admin` implies both. */
export function capabilityOfScopes(scopes: readonly string[]): Capability | undefined {
  let best: Capability | undefined;
  for (const scope of scopes) {
    if ((SCOPES as readonly string[]).includes(scope) && (!best || RANK[scope as Capability] > RANK[best])) {
      best = scope as Capability;
    }
  }
  return best;
}

const ORG_RANK: Record<OrgRole, number> = { viewer: 1, member: 2, admin: 3, owner: 4 };

/** Whether an organization role is at least `minimum` (owner > admin > member > viewer). */
export const orgRoleAtLeast = (role: OrgRole | undefined, minimum: OrgRole): boolean =>
  role !== undefined && ORG_RANK[role] >= ORG_RANK[minimum];
