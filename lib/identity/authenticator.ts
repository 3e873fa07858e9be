import { sha256 } from '#lib/crypto/secrets';
import { getMany } from '#lib/db/batch';
import { putGrouped } from '#lib/db/grouped-puts';
import { keepReadAhead, ungated } from '#lib/db/request-scope';
import { table } from '#lib/db/table';
import { ForbiddenError, UnauthorizedError } from '#lib/errors';
import { verifyAccessToken } from '#lib/identity/access-tokens';
import { organizationHint } from '#lib/identity/api-key-format';
import { type ApiKeyLookupItem, type ApiKeyUseItem, apiKeyUseItem } from '#lib/identity/api-key-records';
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
import type {
  AuthenticateOptions,
  Authenticator,
  Credential,
  CredentialUse,
  Principal,
  RequestContext,
} from '#lib/kernel/context';
import { logger } from '#lib/logger';

/**
 * The bearer authenticator: turns a credential (an access token, from a header or the session cookie,
 * or an API key) into a principal. One message for every failure, so a caller learns nothing about why.
 * No cache: every request reads what revokes its credential, so a revocation holds from its commit.
 *
 * - Access token: one BatchGetItem reads the revocation markers (of the token and of its login), the
 *   user, the membership and the organization, and the items the route reads first (`alsoRead`); the
 *   token dies with its login's logout or a replayed refresh token, with "all devices" (token
 *   version), with the user, and with the membership. One round trip.
 * - API key: looked up by its SHA-256; inactive, revoked, expired or past its rotation grace is 401.
 *   A key names its organization (lib/identity/api-key-format.ts), so one BatchGetItem reads the key's
 *   record, the organization and the route's first items; once the record agrees with the key, the
 *   rate-limit count (`admitted`) and the key's usage record go out together. A key made before keys
 *   named their organization has its record read first, then the rest beside the count and the usage
 *   record. The usage record is written with the status the route answers on success and corrected once
 *   the answer is known, if it is another (`completed`): recorded before the answer leaves, never lost to
 *   a function that stops after answering, and off the answer's path when the request succeeds.
 */
export const bearerAuthenticator: Authenticator = {
  authenticate: (ctx, credential, options = {}) =>
    credential.kind === 'api_key' ? fromApiKey(ctx, credential, options) : fromAccessToken(ctx, credential, options),
  completed: completeApiKeyUse,
};

/** Throws 403 unless the caller may do what a route needs (`read`, `write` or `admin`). */
export function assertAllowed(caller: Pick<Principal, 'method' | 'capability'>, needed: Capability): void {
  if (allows(caller.capability, needed)) return;
  throw new ForbiddenError(
    caller.method === 'api_key'
      ? `This API key lacks the ${needed} scope`
      : `Your role does not allow ${needed} access here`,
  );
}

async function fromAccessToken(
  ctx: RequestContext,
  credential: Credential,
  options: AuthenticateOptions,
): Promise<Principal> {
  const claims = await verifyAccessToken(ctx.ports.secrets.accessTokenKey, credential.value, ctx.ports.clock.now());
  const requested = credential.organizationId;
  const orgId = requested ?? claims.orgId;
  // The login's family marker too: logout and a replayed refresh token end every access token of that
  // login, also those issued before the last refresh, not only the one presented at logout.
  const own = [
    identityKeys.revokedToken(claims.jti),
    identityKeys.user(claims.userId),
    identityKeys.membership(orgId, claims.userId),
    identityKeys.organization(orgId),
    ...(claims.sessionId ? [identityKeys.refreshFamily(claims.sessionId)] : []),
  ];
  const ahead = options.alsoRead?.(orgId) ?? [];
  const read = await getMany([...own, ...ahead]);
  const [revoked, user, membership, org, family] = read;
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
  const principal: Principal = {
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
  options.admitted?.(principal);
  // Only now that the caller is proven a member of `orgId` does the request get what was read there.
  keepReadAhead(ahead, read.slice(own.length));
  return principal;
}

async function fromApiKey(
  ctx: RequestContext,
  credential: Credential,
  options: AuthenticateOptions,
): Promise<Principal> {
  const lookupKey = identityKeys.apiKeyHash(sha256(credential.value));
  // A key that names its organization has the organization, and the route's first items, read with its
  // record; one without, in a second round trip once its record has named it.
  const hint = organizationHint(credential.value);
  const hinted = hint ? [identityKeys.organization(hint), ...(options.alsoRead?.(hint) ?? [])] : [];
  const first = await getMany([lookupKey, ...hinted]);
  const item = first[0] as ApiKeyLookupItem | undefined;
  const now = ctx.ports.clock.now();
  if (!item?.active) throw invalid();
  if (hint !== undefined && item.org_id !== hint) throw invalid();
  if (item.grace_until && now >= new Date(item.grace_until)) throw invalid();
  if (item.key_expires_at && now >= new Date(item.key_expires_at)) throw invalid();
  const requested = credential.organizationId;
  if (requested !== undefined && requested !== item.org_id) {
    throw new ForbiddenError('This API key belongs to another organization');
  }
  const capability = capabilityOfScopes(item.scopes);
  if (!capability) throw new ForbiddenError('This API key has no scopes');
  const orgId = item.org_id;
  options.admitted?.({ method: 'api_key', orgId, capability });
  const use = options.use ? startApiKeyUse(ctx, { orgId, keyId: item.key_id, use: options.use, now }) : undefined;
  const keys = hint ? hinted : [identityKeys.organization(orgId), ...(options.alsoRead?.(orgId) ?? [])];
  const read = hint ? first.slice(1) : await getMany(keys);
  const orgItem = read[0] as OrganizationItem | undefined;
  if (!orgItem || orgItem.deleted_at) {
    // The key died with its organization: the request is no use of it.
    const written = await use;
    if (written) await ungated(() => table.delete({ Key: { pk: written.pk, sk: written.sk } }));
    throw invalid();
  }
  keepReadAhead(keys.slice(1), read.slice(1));
  return {
    method: 'api_key',
    orgId,
    capability,
    isInstanceAdmin: false,
    scopes: item.scopes,
    keyId: item.key_id,
    organization: { id: orgItem.id, name: orgItem.name, slug: orgItem.slug, tier: orgItem.tier },
  };
}

/** Usage records being written, by request, until the request's answer completes them. */
const pendingUses = new WeakMap<RequestContext, Promise<ApiKeyUseItem | undefined>>();

/** Writes the usage record with the status of success, beside the request's other calls. */
function startApiKeyUse(
  ctx: RequestContext,
  input: { orgId: string; keyId: string; use: CredentialUse; now: Date },
): Promise<ApiKeyUseItem | undefined> {
  const record = apiKeyUseItem(input);
  // Bookkeeping of the admission: written whether or not the request is admitted, never held by its gate;
  // with the records of other requests in flight, in one call (lib/db/grouped-puts.ts).
  const written = putGrouped(record).then(
    () => record,
    (error: unknown) => {
      logger.warn('recording an API key use failed; writing it once answered', { error: error as Error });
      return undefined;
    },
  );
  pendingUses.set(ctx, written);
  return written;
}

/**
 * Once the answer is known: the record's status corrected if the answer is not the one written (a 429,
 * a 404), or the whole record written if writing it failed. Bookkeeping: a refused request's too.
 */
async function completeApiKeyUse(ctx: RequestContext, principal: Principal, use: CredentialUse): Promise<void> {
  const { keyId } = principal;
  if (principal.method !== 'api_key' || !keyId) return;
  const written = await pendingUses.get(ctx);
  pendingUses.delete(ctx);
  if (written?.status === use.status) return;
  await ungated(async () => {
    if (written) {
      await table.update({
        Key: { pk: written.pk, sk: written.sk },
        UpdateExpression: 'SET #status = :status',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': use.status },
      });
      return;
    }
    const now = ctx.ports.clock.now();
    await table.put({ Item: apiKeyUseItem({ orgId: principal.orgId, keyId, use, now }) });
  });
}

const invalid = () => new UnauthorizedError('Invalid or expired credential');
