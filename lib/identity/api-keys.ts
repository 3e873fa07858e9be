import type { Principal, RequestContext } from '#lib/context';
import { randomBase62, sha256 } from '#lib/crypto/secrets';
import { getMany } from '#lib/db/batch';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { itemIsNew, transact } from '#lib/db/transactions';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import { type ApiKeyLookupItem, maskApiKey, newApiKey } from '#lib/identity/api-key-format';
import { epochSeconds, identityKeys } from '#lib/identity/keys';
import type { MembershipItem } from '#lib/identity/memberships';
import type { OrganizationItem } from '#lib/identity/organizations';
import { orgRoleAtLeast, SCOPES, type Scope } from '#lib/identity/roles';

/**
 * Organization API keys: the record under `T#<org>` / `APIKEY#<id>` and the lookup item(s) under
 * `APIKEYHASH#<sha256>` that authentication reads. The lookup items are always derived from the record
 * and written in the same transaction, so authentication never sees scopes, activity or expiry that the
 * record does not have. The raw key leaves this module only in the results of create, rotate and roll.
 */

/** An API key as stored. `key_hash` and `grace_key_hash` never leave this module. */
export interface ApiKeyItem {
  pk: string;
  sk: string;
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  scopes: Scope[];
  active: boolean;
  masked_key: string;
  key_hash: string;
  /** The key's own expiry (ISO). Not `expires_at`: that attribute is the table's TTL (epoch seconds). */
  key_expires_at?: string;
  /** The previous key during a rotation grace, and the instant its grace ends. */
  grace_key_hash?: string;
  grace_until?: string;
  created_by: number | null;
  created_at: string;
  updated_at: string;
  revoked_at?: string;
  rotated_at?: string;
  deleted_at?: string;
  /** Optimistic lock: every write is conditional on the version it read. */
  version: number;
}

/** The API key record of the API (masked; never a hash). */
export interface ApiKey {
  id: string;
  name: string;
  description: string | null;
  scopes: Scope[];
  active: boolean;
  masked_key: string;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  rotated_at: string | null;
  created_by: number | null;
  grace_until: string | null;
}

/** A record together with its raw key: the answer of create, rotate and roll, and of nothing else. */
export type ApiKeyWithSecret = ApiKey & { key: string };

export interface ApiKeyUse {
  method: string;
  route: string;
  status: number;
  at: string;
}

export const toApiKey = (item: ApiKeyItem): ApiKey => ({
  id: item.id,
  name: item.name,
  description: item.description ?? null,
  scopes: item.scopes,
  active: item.active,
  masked_key: item.masked_key,
  created_at: item.created_at,
  updated_at: item.updated_at,
  expires_at: item.key_expires_at ?? null,
  revoked_at: item.revoked_at ?? null,
  rotated_at: item.rotated_at ?? null,
  created_by: item.created_by ?? null,
  grace_until: item.grace_key_hash ? (item.grace_until ?? null) : null,
});

const HOUR_MS = 3_600_000;

const keyNotFound = () => new NotFoundError('API key not found');
const orgNotFound = () => new NotFoundError('Organization not found');
const changedMeanwhile = () =>
  new ConflictError('The API key was changed by another request; read it again and retry');

/**
 * The caller may manage the keys of the organization in the path: an owner or admin of it (an instance
 * admin counts as one), or an API key of that very organization with the `admin` scope. Keys are
 * credentials, so even reading them needs admin. An organization the caller is not in answers 404, as
 * every record of another tenant does.
 */
async function requireKeyManager(ctx: RequestContext, orgId: string): Promise<Principal> {
  const principal = requirePrincipal(ctx);
  if (principal.method === 'api_key') {
    if (principal.orgId !== orgId) throw orgNotFound();
    if (principal.capability !== 'admin') throw new ForbiddenError('Managing API keys needs the admin scope');
    return principal;
  }
  if (principal.userId === undefined) throw orgNotFound();
  const [orgItem, membershipItem] = await getMany([
    identityKeys.organization(orgId),
    identityKeys.membership(orgId, principal.userId),
  ]);
  const org = orgItem as OrganizationItem | undefined;
  const membership = membershipItem as MembershipItem | undefined;
  if (!org || org.deleted_at) throw orgNotFound();
  if (principal.isInstanceAdmin) return principal;
  if (!membership) throw orgNotFound();
  if (!orgRoleAtLeast(membership.role, 'admin')) {
    throw new ForbiddenError('Managing API keys needs the admin or owner role in the organization');
  }
  return principal;
}

/** `write` implies `read` and `admin` both, so duplicates are dropped and the order is canonical. */
const normalizeScopes = (scopes: readonly Scope[]): Scope[] =>
  SCOPES.filter((scope) => scopes.includes(scope));

/**
 * Key ids sort by creation time (so lists come oldest first without a separate index), followed by
 * enough randomness that they cannot be guessed.
 */
const newKeyId = (now: Date): string =>
  `key_${now.getTime().toString(36).padStart(9, '0')}${randomBase62(12)}`;

function lookupItem(record: ApiKeyItem, keyHash: string, graceUntil?: string): ApiKeyLookupItem {
  return {
    ...identityKeys.apiKeyHash(keyHash),
    org_id: record.org_id,
    key_id: record.id,
    scopes: record.scopes,
    active: record.active,
    ...(record.key_expires_at ? { key_expires_at: record.key_expires_at } : {}),
    ...(graceUntil ? { grace_until: graceUntil, expires_at: epochSeconds(new Date(graceUntil)) } : {}),
  };
}

/** The lookup items a record implies at `now`: none once revoked or deleted; the previous key while in grace. */
function liveLookups(record: ApiKeyItem, now: Date): ApiKeyLookupItem[] {
  if (record.revoked_at || record.deleted_at) return [];
  const items = [lookupItem(record, record.key_hash)];
  if (record.grace_key_hash && record.grace_until && new Date(record.grace_until) > now) {
    items.push(lookupItem(record, record.grace_key_hash, record.grace_until));
  }
  return items;
}

/**
 * Writes a changed record and everything authentication reads about it in one transaction: the live
 * lookup items are put whole (never updated, so a lookup item that TTL removed cannot come back half
 * filled), and every hash the record no longer vouches for is deleted. The record's version condition
 * turns a concurrent change into a 409 instead of a lookup item that disagrees with its record.
 */
async function commit(before: ApiKeyItem, after: ApiKeyItem, now: Date): Promise<void> {
  const live = liveLookups(after, now);
  const kept = new Set(live.map((item) => item.pk));
  const stale = [before.key_hash, before.grace_key_hash]
    .filter((hash): hash is string => hash !== undefined)
    .map((hash) => identityKeys.apiKeyHash(hash))
    .filter((key) => !kept.has(key.pk));
  await transact(
    [
      {
        Put: {
          Item: after,
          ConditionExpression: '#version = :version',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':version': before.version },
        },
      },
      ...live.map((item) => ({ Put: { Item: item } })),
      ...stale.map((key) => ({ Delete: { Key: key } })),
    ],
    { 0: changedMeanwhile },
  );
}

/** A key of the organization that is not deleted, read strongly so that its version is current. */
async function loadKey(orgId: string, keyId: string): Promise<ApiKeyItem> {
  const result = await table.get({ Key: identityKeys.apiKey(orgId, keyId), ConsistentRead: true });
  const item = result.Item as ApiKeyItem | undefined;
  if (!item || item.deleted_at) throw keyNotFound();
  return item;
}

const withoutGrace = (item: ApiKeyItem): ApiKeyItem => ({
  ...item,
  grace_key_hash: undefined,
  grace_until: undefined,
});

export async function listApiKeys(
  ctx: RequestContext,
  orgId: string,
  page: PageRequest,
): Promise<Page<ApiKey>> {
  await requireKeyManager(ctx, orgId);
  const prefix = identityKeys.apiKey(orgId, '');
  const result = await queryPage<ApiKeyItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      FilterExpression: 'attribute_not_exists(deleted_at)',
      ExpressionAttributeValues: { ':pk': prefix.pk, ':sk': prefix.sk },
    },
    page,
  );
  return { items: result.items.map(toApiKey), total: result.total };
}

export async function getApiKey(ctx: RequestContext, orgId: string, keyId: string): Promise<ApiKey> {
  await requireKeyManager(ctx, orgId);
  return toApiKey(await loadKey(orgId, keyId));
}

export interface NewApiKey {
  name: string;
  description?: string | null;
  scopes?: Scope[];
  expires_at?: string;
}

export async function createApiKey(
  ctx: RequestContext,
  orgId: string,
  input: NewApiKey,
): Promise<ApiKeyWithSecret> {
  const principal = await requireKeyManager(ctx, orgId);
  const now = ctx.clock.now();
  if (input.expires_at !== undefined && new Date(input.expires_at) <= now) {
    throw new ValidationError('The request is not valid', [
      { path: 'body.expires_at', message: 'must be in the future' },
    ]);
  }
  const key = newApiKey();
  const id = newKeyId(now);
  const at = now.toISOString();
  const record: ApiKeyItem = {
    ...identityKeys.apiKey(orgId, id),
    id,
    org_id: orgId,
    name: input.name,
    description: input.description ?? null,
    scopes: normalizeScopes(input.scopes ?? ['read']),
    active: true,
    masked_key: maskApiKey(key),
    key_hash: sha256(key),
    ...(input.expires_at !== undefined ? { key_expires_at: new Date(input.expires_at).toISOString() } : {}),
    created_by: principal.userId ?? null,
    created_at: at,
    updated_at: at,
    version: 1,
  };
  await transact([
    { Put: { Item: record, ConditionExpression: itemIsNew } },
    { Put: { Item: lookupItem(record, record.key_hash), ConditionExpression: itemIsNew } },
  ]);
  return { ...toApiKey(record), key };
}

export interface ApiKeyChanges {
  name?: string;
  description?: string | null;
  scopes?: Scope[];
  active?: boolean;
}

/** Renames, rescopes, deactivates or reactivates a key; a revoked key stays revoked (409 on `active: true`). */
export async function updateApiKey(
  ctx: RequestContext,
  orgId: string,
  keyId: string,
  changes: ApiKeyChanges,
): Promise<ApiKey> {
  await requireKeyManager(ctx, orgId);
  const before = await loadKey(orgId, keyId);
  if (changes.active === true && before.revoked_at) {
    throw new ConflictError('A revoked API key cannot be activated again; create a new key', [
      { path: 'body.active', message: 'the key is revoked' },
    ]);
  }
  const now = ctx.clock.now();
  const after: ApiKeyItem = {
    ...before,
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.scopes !== undefined ? { scopes: normalizeScopes(changes.scopes) } : {}),
    ...(changes.active !== undefined ? { active: changes.active } : {}),
    updated_at: now.toISOString(),
    version: before.version + 1,
  };
  await commit(before, after, now);
  return toApiKey(after);
}

/** Soft delete: the record stays (for its usage log's sake) but is gone from the API, and so is the key. */
export async function deleteApiKey(
  ctx: RequestContext,
  orgId: string,
  keyId: string,
): Promise<{ id: string; deleted_at: string }> {
  await requireKeyManager(ctx, orgId);
  const before = await loadKey(orgId, keyId);
  const now = ctx.clock.now();
  const at = now.toISOString();
  await commit(
    before,
    { ...withoutGrace(before), active: false, deleted_at: at, updated_at: at, version: before.version + 1 },
    now,
  );
  return { id: keyId, deleted_at: at };
}

/** Revoking kills the key and any predecessor still in its grace; revoking again changes nothing. */
export async function revokeApiKey(ctx: RequestContext, orgId: string, keyId: string): Promise<ApiKey> {
  await requireKeyManager(ctx, orgId);
  const before = await loadKey(orgId, keyId);
  if (before.revoked_at) return toApiKey(before);
  const now = ctx.clock.now();
  const at = now.toISOString();
  const after: ApiKeyItem = {
    ...withoutGrace(before),
    active: false,
    revoked_at: at,
    updated_at: at,
    version: before.version + 1,
  };
  await commit(before, after, now);
  return toApiKey(after);
}

/**
 * Gives the key a new secret. With `graceHours > 0` (rotate) the previous secret keeps working until
 * then; with 0 (roll) it dies at once. Only one predecessor is kept: a key rotated again during a grace
 * ends the older secret's grace at once, since its holder has already been handed the newer one.
 * A revoked, inactive or expired key answers 409, so that a new secret never silently re-enables it.
 */
export async function replaceApiKeySecret(
  ctx: RequestContext,
  orgId: string,
  keyId: string,
  graceHours: number,
): Promise<ApiKeyWithSecret> {
  await requireKeyManager(ctx, orgId);
  const before = await loadKey(orgId, keyId);
  const now = ctx.clock.now();
  if (before.revoked_at) throw new ConflictError('The API key is revoked; create a new key');
  if (!before.active) throw new ConflictError('The API key is inactive; activate it first');
  if (before.key_expires_at && new Date(before.key_expires_at) <= now) {
    throw new ConflictError('The API key has expired; create a new key');
  }
  const key = newApiKey();
  const at = now.toISOString();
  const after: ApiKeyItem = {
    ...withoutGrace(before),
    key_hash: sha256(key),
    masked_key: maskApiKey(key),
    ...(graceHours > 0
      ? {
          grace_key_hash: before.key_hash,
          grace_until: new Date(now.getTime() + graceHours * HOUR_MS).toISOString(),
        }
      : {}),
    rotated_at: at,
    updated_at: at,
    version: before.version + 1,
  };
  await commit(before, after, now);
  return { ...toApiKey(after), key };
}

/** The key's usage records, newest first; records past their retention but not yet removed by TTL are left out. */
export async function listApiKeyUsage(
  ctx: RequestContext,
  orgId: string,
  keyId: string,
  page: PageRequest,
): Promise<Page<ApiKeyUse>> {
  await requireKeyManager(ctx, orgId);
  await loadKey(orgId, keyId);
  // The use key with empty time and nonce, less its last separator: the prefix of this key's uses only.
  const uses = identityKeys.apiKeyUse(orgId, keyId, '', '');
  const result = await queryPage<ApiKeyUse>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      FilterExpression: 'expires_at > :now',
      ExpressionAttributeValues: {
        ':pk': uses.pk,
        ':sk': uses.sk.slice(0, -1),
        ':now': epochSeconds(ctx.clock.now()),
      },
      ProjectionExpression: '#method, #route, #status, #at',
      ExpressionAttributeNames: { '#method': 'method', '#route': 'route', '#status': 'status', '#at': 'at' },
      ScanIndexForward: false,
    },
    page,
  );
  return {
    items: result.items.map((use) => ({
      method: use.method,
      route: use.route,
      status: use.status,
      at: use.at,
    })),
    total: result.total,
  };
}
