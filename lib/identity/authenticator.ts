import type { Clock } from '#lib/adapters/ports';
import type { Principal } from '#lib/context';
import { randomBase62, sha256 } from '#lib/crypto/secrets';
import { getMany } from '#lib/db/batch';
import { table } from '#lib/db/table';
import { ForbiddenError, UnauthorizedError } from '#lib/errors';
import type { Authenticator } from '#lib/http/middleware/authenticate';
import { type RouteDef, requiredPermission } from '#lib/http/route';
import type { HttpEvent } from '#lib/http/types';
import { verifyAccessToken } from '#lib/identity/access-tokens';
import { API_KEY_PREFIX } from '#lib/identity/api-key-format';
import type { ApiKeyLookupItem } from '#lib/identity/api-key-records';
import { epochSeconds, identityKeys } from '#lib/identity/keys';
import type { MembershipItem } from '#lib/identity/memberships';
import type { OrganizationItem } from '#lib/identity/organizations';
import {
  allows,
  capabilityOfOrgRole,
  capabilityOfScopes,
  capabilityOfUserRole,
  lesser,
} from '#lib/identity/roles';
import { toUser, type UserItem } from '#lib/identity/users';

export const SESSION_COOKIE = 'service_jwt';
/** How long API key usage records are kept. */
const USAGE_RETENTION_DAYS = 90;
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface AuthenticatorOptions {
  secret: () => Uint8Array;
  clock: Clock;
  allowedOrigins: string[];
}

/**
 * The bearer authenticator: an `Authorization: Bearer` JWT or API key (`osk_live_…`), or the
 * `service_jwt` cookie. One message for every failure, so a caller learns nothing about why.
 *
 * - JWT: one BatchGetItem reads the revocation marker, the user, the membership and the organization;
 *   the token dies with logout (revocation), with "all devices" (token version), with the user, and
 *   with the membership.
 * - Cookie: as JWT, and a state-changing request must come from an allowed Origin or carry
 *   X-Requested-With (CSRF).
 * - API key: looked up by its SHA-256; inactive, revoked, expired or past its rotation grace is 401.
 *   Its use is appended to the key's usage log once the response is known.
 */
export function bearerAuthenticator(options: AuthenticatorOptions): Authenticator {
  const allowedOrigins = new Set(options.allowedOrigins);

  async function authenticate(event: HttpEvent, route: RouteDef): Promise<Principal> {
    const header = event.headers.authorization;
    let principal: Principal;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) throw invalid();
      const credential = match[1] as string;
      principal = credential.startsWith(API_KEY_PREFIX)
        ? await fromApiKey(credential, event)
        : await fromJwt(credential, event, 'jwt');
    } else {
      const cookie = readCookie(event.cookies ?? [], SESSION_COOKIE);
      if (!cookie) throw new UnauthorizedError();
      principal = await fromJwt(cookie, event, 'cookie');
      requireSameSite(event);
    }
    const needed = requiredPermission(route);
    if (!allows(principal.capability, needed)) {
      throw new ForbiddenError(
        principal.method === 'api_key'
          ? `This API key lacks the ${needed} scope`
          : `Your role does not allow ${needed} access here`,
      );
    }
    return principal;
  }

  async function fromJwt(token: string, event: HttpEvent, method: 'jwt' | 'cookie'): Promise<Principal> {
    const claims = await verifyAccessToken(options.secret(), token, options.clock.now());
    const requested = event.headers['x-organization-id'];
    const orgId = requested ?? claims.orgId;
    const [revoked, user, membership, org] = await getMany([
      identityKeys.revokedToken(claims.jti),
      identityKeys.user(claims.userId),
      identityKeys.membership(orgId, claims.userId),
      identityKeys.organization(orgId),
    ]);
    const userItem = user as UserItem | undefined;
    if (revoked || !userItem || (userItem.token_version ?? 0) !== claims.tokenVersion) throw invalid();
    const orgItem = org as OrganizationItem | undefined;
    const member = membership as MembershipItem | undefined;
    if (!member || !orgItem || orgItem.deleted_at) {
      if (requested !== undefined) throw new ForbiddenError('You are not a member of that organization');
      throw invalid();
    }
    const isInstanceAdmin = userItem.role === 'admin';
    return {
      method,
      orgId,
      capability: isInstanceAdmin
        ? 'admin'
        : lesser(capabilityOfUserRole(userItem.role), capabilityOfOrgRole(member.role)),
      userId: userItem.id,
      username: userItem.username,
      userRole: userItem.role,
      orgRole: member.role,
      isInstanceAdmin,
      scopes: [],
      tokenId: claims.jti,
      tokenExpiresAt: claims.expiresAt,
      user: toUser(userItem),
      organization: { id: orgItem.id, name: orgItem.name, slug: orgItem.slug, tier: orgItem.tier },
    };
  }

  async function fromApiKey(key: string, event: HttpEvent): Promise<Principal> {
    const lookup = await table.get({ Key: identityKeys.apiKeyHash(sha256(key)) });
    const item = lookup.Item as ApiKeyLookupItem | undefined;
    const now = options.clock.now();
    if (!item?.active) throw invalid();
    if (item.grace_until && now >= new Date(item.grace_until)) throw invalid();
    if (item.key_expires_at && now >= new Date(item.key_expires_at)) throw invalid();
    const requested = event.headers['x-organization-id'];
    if (requested !== undefined && requested !== item.org_id) {
      throw new ForbiddenError('This API key belongs to another organization');
    }
    const org = await table.get({ Key: identityKeys.organization(item.org_id) });
    const orgItem = org.Item as OrganizationItem | undefined;
    if (!orgItem || orgItem.deleted_at) throw invalid();
    const capability = capabilityOfScopes(item.scopes);
    if (!capability) throw new ForbiddenError('This API key has no scopes');
    return {
      method: 'api_key',
      orgId: item.org_id,
      capability,
      isInstanceAdmin: false,
      scopes: item.scopes,
      keyId: item.key_id,
      organization: { id: orgItem.id, name: orgItem.name, slug: orgItem.slug, tier: orgItem.tier },
    };
  }

  function requireSameSite(event: HttpEvent): void {
    const method = event.requestContext?.http?.method?.toUpperCase() ?? 'GET';
    if (!STATE_CHANGING.has(method)) return;
    const origin = event.headers.origin;
    if (origin !== undefined ? allowedOrigins.has(origin) : event.headers['x-requested-with'] !== undefined)
      return;
    throw new ForbiddenError(
      'Cookie-authenticated changes need an allowed Origin or an X-Requested-With header',
    );
  }

  async function completed(principal: Principal, route: RouteDef, status: number): Promise<void> {
    if (principal.method !== 'api_key' || !principal.keyId) return;
    const now = options.clock.now();
    const at = now.toISOString();
    await table.put({
      Item: {
        ...identityKeys.apiKeyUse(principal.orgId, principal.keyId, at, randomBase62(6)),
        key_id: principal.keyId,
        method: route.method,
        route: route.path,
        status,
        at,
        expires_at: epochSeconds(now) + USAGE_RETENTION_DAYS * 86_400,
      },
    });
  }

  return { authenticate, completed };
}

const invalid = () => new UnauthorizedError('Invalid or expired credential');

export function readCookie(cookies: string[], name: string): string | undefined {
  for (const cookie of cookies) {
    const index = cookie.indexOf('=');
    if (index > 0 && cookie.slice(0, index).trim() === name) return cookie.slice(index + 1).trim();
  }
  return undefined;
}
