import { sha256 } from '#lib/crypto/secrets';
import { getMany } from '#lib/db/batch';
import { table } from '#lib/db/table';
import { ForbiddenError, UnauthorizedError } from '#lib/errors';
import { verifyAccessToken } from '#lib/identity/access-tokens';
import { type ApiKeyLookupItem, apiKeyUseItem } from '#lib/identity/api-key-records';
import { identityKeys } from '#lib/identity/keys';
import type { MembershipItem } from '#lib/identity/memberships';
import type { OrganizationItem } from '#lib/identity/organizations';
import {
  allows,
  type Capability,
  capabilityOfOrgRole,
  capabilityOfScopes,
  capabilityOfUserRole,
  lesser,
} from '#lib/identity/roles';
import { toUser, type UserItem } from '#lib/identity/users';
import type { Authenticator, Credential, CredentialUse, Principal, RequestContext } from '#lib/kernel/context';

/**
 * The bearer authenticator: turns a credential (an access token, from a header or the session cookie,
 * or an API key) into a principal. One message for every failure, so a caller learns nothing about why.
 *
 * - Access token: one BatchGetItem reads the revocation markers (of the token and of its login), the
 *   user, the membership and the organization; the token dies with its login's logout or a replayed
 *   refresh token, with "all devices" (token version), with the user, and with the membership.
 * - API key: looked up by its SHA-256; inactive, revoked, expired or past its rotation grace is 401.
 *   Its use is appended to the key's usage log once the response is known.
 */
export const bearerAuthenticator: Authenticator = {
  authenticate: (ctx, credential) =>
    credential.kind === 'api_key' ? fromApiKey(ctx, credential) : fromAccessToken(ctx, credential),
  completed: recordApiKeyUse,
};

/** Throws 403 unless the principal may do what a route needs (`read`, `write` or `admin`). */
export function assertAllowed(principal: Principal, needed: Capability): void {
  if (allows(principal.capability, needed)) return;
  throw new ForbiddenError(
    principal.method === 'api_key'
      ? `This API key lacks the ${needed} scope`
      : `Your role does not allow ${needed} access here`,
  );
}

async function fromAccessToken(ctx: RequestContext, credential: Credential): Promise<Principal> {
  const claims = await verifyAccessToken(ctx.ports.secrets.accessTokenKey, credential.value, ctx.ports.clock.now());
  const requested = credential.organizationId;
  const orgId = requested ?? claims.orgId;
  // The login's family marker too: logout and a replayed refresh token end every access token of that
  // login, also those issued before the last refresh, not only the one presented at logout.
  const [revoked, user, membership, org, family] = await getMany([
    identityKeys.revokedToken(claims.jti),
    identityKeys.user(claims.userId),
    identityKeys.membership(orgId, claims.userId),
    identityKeys.organization(orgId),
    ...(claims.sessionId ? [identityKeys.refreshFamily(claims.sessionId)] : []),
  ]);
  const userItem = user as UserItem | undefined;
  const sessionEnded = Boolean((family as { revoked?: boolean } | undefined)?.revoked);
  if (revoked || sessionEnded || !userItem || (userItem.token_version ?? 0) !== claims.tokenVersion) throw invalid();
  const orgItem = org as OrganizationItem | undefined;
  const member = membership as MembershipItem | undefined;
  if (!member || !orgItem || orgItem.deleted_at) {
    if (requested !== undefined) throw new ForbiddenError('You are not a member of that organization');
    throw invalid();
  }
  const isInstanceAdmin = userItem.role === 'admin';
  return {
    method: credential.kind === 'cookie' ? 'cookie' : 'jwt',
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
    ...(claims.sessionId ? { sessionId: claims.sessionId } : {}),
    user: toUser(userItem),
    organization: { id: orgItem.id, name: orgItem.name, slug: orgItem.slug, tier: orgItem.tier },
  };
}

async function fromApiKey(ctx: RequestContext, credential: Credential): Promise<Principal> {
  const lookup = await table.get({ Key: identityKeys.apiKeyHash(sha256(credential.value)) });
  const item = lookup.Item as ApiKeyLookupItem | undefined;
  const now = ctx.ports.clock.now();
  if (!item?.active) throw invalid();
  if (item.grace_until && now >= new Date(item.grace_until)) throw invalid();
  if (item.key_expires_at && now >= new Date(item.key_expires_at)) throw invalid();
  const requested = credential.organizationId;
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

async function recordApiKeyUse(ctx: RequestContext, principal: Principal, use: CredentialUse): Promise<void> {
  if (principal.method !== 'api_key' || !principal.keyId) return;
  const now = ctx.ports.clock.now();
  await table.put({ Item: apiKeyUseItem({ orgId: principal.orgId, keyId: principal.keyId, use, now }) });
}

const invalid = () => new UnauthorizedError('Invalid or expired credential');
