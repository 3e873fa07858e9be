import type * as z from 'zod';
import { type RouteDef, requiredPermission } from '#lib/http/route';
import { allows, orgRoleAtLeast } from '#lib/identity/roles';
import type { Caller } from '#tests/support/auth-fixture';
import { concretePath, sample } from '#tests/support/registry';

/**
 * Who may use which route, and a request to each that a caller allowed to could send: for the
 * authentication matrix (tests/integration/auth-matrix.test.ts), which sends it as every caller.
 */

export const key = (route: Pick<RouteDef, 'method' | 'path'>) => `${route.method} ${route.path}`;

/** Where the requests point: the organization every caller acts in and a team of it. */
export interface Place {
  orgId: string;
  teamId: number;
}

/**
 * What a route needs beyond its registry permission, checked in the domain (the registry does not say):
 * a user rather than an API key; an organization admin or owner (an API key's `admin` scope counts as
 * admin, never as owner); or the instance admin. From the specification (admin-only operations; owner-
 * only organization deletion; members and invites admin and above) and each route's description. The
 * matrix checks both ways: a caller without the need gets 403, every caller with it gets through, so a
 * route that starts refusing callers fails here until it is listed.
 */
export type Need = 'user' | 'org admin' | 'org owner' | 'instance admin';
export const NEEDS: Record<string, Need> = {
  'GET /users': 'user',
  'GET /users/{id}': 'user',
  'PATCH /users/{id}': 'instance admin',
  'DELETE /users/{id}': 'instance admin',
  'POST /organizations': 'user',
  'POST /organizations/invites/{token}/accept': 'user',
  'POST /teams': 'user',
  'POST /teams/invites/{token}/accept': 'user',
  // Keys are credentials: even reading them needs an admin.
  'GET /organizations/{orgId}/api-keys': 'org admin',
  'POST /organizations/{orgId}/api-keys': 'org admin',
  'GET /organizations/{orgId}/api-keys/{keyId}': 'org admin',
  'PATCH /organizations/{orgId}/api-keys/{keyId}': 'org admin',
  'DELETE /organizations/{orgId}/api-keys/{keyId}': 'org admin',
  'POST /organizations/{orgId}/api-keys/{keyId}/revoke': 'org admin',
  'POST /organizations/{orgId}/api-keys/{keyId}/rotate': 'org admin',
  'POST /organizations/{orgId}/api-keys/{keyId}/roll': 'org admin',
  'GET /organizations/{orgId}/api-keys/{keyId}/usage': 'org admin',
  'PATCH /organizations/{id}': 'org admin',
  'DELETE /organizations/{id}': 'org owner',
  'POST /organizations/{id}/members': 'org admin',
  'PATCH /organizations/{id}/members/{userId}': 'org admin',
  'DELETE /organizations/{id}/members/{userId}': 'org admin',
  'POST /organizations/{id}/invites': 'org admin',
  // The team in the path has no member but its creator, the owner: only organization admins manage it.
  'PATCH /teams/{id}': 'org admin',
  'DELETE /teams/{id}': 'org admin',
  'POST /teams/{id}/members': 'org admin',
  'GET /teams/{id}/invites': 'org admin',
  'POST /teams/{id}/invites': 'org admin',
  'POST /credentials': 'org admin',
  'DELETE /credentials/{key}': 'org admin',
  'POST /integrations/{id}/configure': 'org admin',
  'PATCH /tenant-config': 'org admin',
  'POST /tenant-config/webhook-secret/rotate': 'org admin',
  'POST /tenant-config/webhooks/test': 'org admin',
  'POST /billing/checkout': 'org admin',
  'POST /billing/portal': 'org admin',
  'POST /billing/create-payment-intent': 'org admin',
  'POST /billing/change-plan': 'org admin',
  'POST /billing/auto-topup': 'org admin',
  'PUT /billing/auto-topup': 'org admin',
  'POST /billing/credit-auto-topup': 'org admin',
  'PUT /billing/credit-auto-topup': 'org admin',
  'DELETE /tasks/{id}': 'org admin',
  'GET /backups': 'org admin',
  'GET /backups/stats': 'org admin',
  'GET /backups/logs': 'org admin',
  'GET /backups/remote-status': 'org admin',
  'GET /backups/{filename}/download': 'org admin',
  'DELETE /backups/{filename}': 'org admin',
  'POST /backups/trigger': 'org admin',
  'POST /backups/{filename}/restore': 'org owner',
};

/**
 * Bodies the generated sample would not make valid, for routes whose role the domain checks after
 * validation: a refusal there must come from the role, not from the body.
 */
export const BODIES: Record<string, unknown> = {
  'POST /organizations/{orgId}/api-keys': { name: 'matrix' },
  'PATCH /organizations/{orgId}/api-keys/{keyId}': { name: 'renamed' },
  'POST /organizations/{id}/members': { user_id: '999999', role: 'member' },
  'POST /organizations/{id}/invites': { email: 'invitee@example.com', role: 'member' },
  'POST /teams/{id}/invites': { email: 'invitee@example.com', role: 'member' },
  'POST /teams/{id}/members': { user_id: 999999, role: 'member' },
  'PATCH /tenant-config': { webhooks: { task_completed: null } },
  'POST /billing/checkout': { package_slug: 'starter' },
  'POST /billing/create-payment-intent': { package_slug: 'starter' },
  'POST /billing/change-plan': { tier: 'free' },
  'POST /billing/auto-topup': { enabled: false, threshold: 1000, package_slug: 'starter' },
  'PUT /billing/auto-topup': { enabled: false, threshold: 1000, package_slug: 'starter' },
  'POST /billing/credit-auto-topup': { enabled: false, threshold: 1000, package_slug: 'starter' },
  'PUT /billing/credit-auto-topup': { enabled: false, threshold: 1000, package_slug: 'starter' },
  'PATCH /users/{id}': { role: 'editor' },
};

/** Candidate values of path parameters: ids of records that do not exist, in the forms routes accept. */
const CANDIDATES: Record<string, string[]> = {
  id: ['999999', 'job_0000000000000000', 'msg_00000000000000000000000', 'missing-template'],
  keyId: ['key_000000000missing'],
  userId: ['999999'],
  executionId: ['999999'],
  token: ['missing-invite-token'],
  name: ['missing-agent'],
  slug: ['missing-thing'],
  idOrSlug: ['missing-template'],
  key: ['missing.credential'],
  queue: ['default'],
  sessionId: ['cs_local_0123456789abcdef'],
};

/**
 * For each path parameter, the first candidate the route's own schema accepts; organizations and teams
 * are the place's, so that role checks against the record in the path are reached.
 */
export function idsFor(route: RouteDef, place: Place): Record<string, string> {
  const shape = (route.params as { shape?: Record<string, z.ZodType> } | undefined)?.shape ?? {};
  const backup = `backup-${place.orgId}-20250301T100000123Z.json.gz`;
  const ids: Record<string, string> = {};
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    const param = name as string;
    const own = (prefix: string) => param === 'id' && route.path.startsWith(prefix);
    let candidates = CANDIDATES[param] ?? ['1'];
    if (param === 'orgId' || own('/organizations/')) candidates = [place.orgId];
    else if (own('/teams/')) candidates = [String(place.teamId)];
    else if (param === 'filename') candidates = [backup];
    ids[param] = candidates.find((value) => shape[param]?.safeParse(value).success) ?? (candidates[0] as string);
  }
  return ids;
}

export interface Request {
  path: string;
  body?: string;
}

/** A request a caller with the right credential could send: the real path and a body the schema accepts. */
export function requestOf(route: RouteDef, place: Place): Request {
  const body = BODIES[key(route)] ?? (route.body ? sample(route.body) : undefined);
  const path = concretePath(route, idsFor(route, place));
  return { path, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) };
}

/** Whether the service should let `caller` use `route`: its permission, then what the domain needs. */
export function admits(caller: Caller, route: RouteDef): boolean {
  if (!allows(caller.capability, requiredPermission(route))) return false;
  switch (NEEDS[key(route)]) {
    case 'user':
      return caller.user;
    case 'org admin':
      return orgRoleAtLeast(caller.orgRole, 'admin');
    case 'org owner':
      return caller.user && caller.orgRole === 'owner';
    case 'instance admin':
      return caller.instanceAdmin;
    default:
      return true;
  }
}
