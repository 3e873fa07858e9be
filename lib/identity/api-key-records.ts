import { randomBase62 } from '#lib/crypto/secrets';
import { itemIsNew } from '#lib/db/conditions';
import { type TableKey, tenantPk } from '#lib/db/keys';
import { type Page, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { ConflictError } from '#lib/errors';
import type { Scope } from '#lib/identity/roles';
import { epochSeconds } from '#lib/identity/ttl';

const KEY_PREFIX = 'APIKEY#';

/**
 * Organization API keys as stored: the record, and the lookup item(s) that authentication reads. The
 * lookup items are always derived from the record and written in the same transaction, so that
 * authentication never sees scopes, activity or expiry that the record does not have.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | API key | `T#<org>` | `APIKEY#<id>` | `version`: every write is conditional on the one read |
 * | API key lookup | `APIKEYHASH#<sha256>` | `APIKEYHASH` | one per live secret; TTL while in a rotation grace |
 * | API key use | `T#<org>#APIKEYUSE#<id>` | `<time>#<rand>` | TTL; appended by the authenticator |
 *
 * A key's uses grow with every request made with it, so they live in a partition of their own, one per
 * key, which only the key's usage list reads: no Query of the organization's records reads past them.
 * (Installations from before kept them in `T#<org>` under `APIKEYUSE#<id>#…`; infra/migrations/
 * api-key-uses.ts moves them.)
 *
 * Reasons an API key write is refused with: `key-changed` (its version moved since it was read) and
 * `key-exists` (a new id or hash is in use).
 */
export const apiKeyKeys = {
  byId: (orgId: string, keyId: string): TableKey => ({ pk: tenantPk(orgId), sk: `${KEY_PREFIX}${keyId}` }),
  lookup: (keyHash: string): TableKey => ({ pk: `APIKEYHASH#${keyHash}`, sk: 'APIKEYHASH' }),
  usesPk: (orgId: string, keyId: string): string => `${tenantPk(orgId)}#APIKEYUSE#${keyId}`,
  use: (orgId: string, keyId: string, at: string, nonce: string): TableKey => ({
    pk: apiKeyKeys.usesPk(orgId, keyId),
    sk: `${at}#${nonce}`,
  }),
  /** Where uses were kept before they had partitions of their own: `T#<org>`, under this prefix. */
  legacyUsesPrefix: 'APIKEYUSE#',
};

/** How long API key usage records are kept. */
export const USAGE_RETENTION_DAYS = 90;

/** An API key as stored. `key_hash` and `grace_key_hash` never leave the identity area. */
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

/**
 * The lookup item under `APIKEYHASH#<sha256>`: everything authentication needs in one read. It mirrors
 * the key record's `scopes`, `active` and `expires_at`, so every change to those writes both items in
 * one transaction.
 */
export interface ApiKeyLookupItem {
  pk: string;
  sk: string;
  org_id: string;
  key_id: string;
  scopes: string[];
  active: boolean;
  /** The key's own expiry (ISO), if it has one. */
  key_expires_at?: string;
  /** After a rotation, the old key works until this instant (ISO). */
  grace_until?: string;
  /** TTL (epoch seconds) so that a rotated key's lookup item disappears after its grace. */
  expires_at?: number;
}

/** One authenticated use of a key, as the authenticator appends it. */
export interface ApiKeyUseItem {
  pk: string;
  sk: string;
  key_id: string;
  method: string;
  route: string;
  status: number;
  at: string;
  expires_at: number;
}

/** The API key record of the API (masked; never a hash). */
export type ApiKey = Pick<
  ApiKeyItem,
  'id' | 'name' | 'description' | 'scopes' | 'active' | 'masked_key' | 'created_at' | 'updated_at' | 'created_by'
> & {
  expires_at: string | null;
  revoked_at: string | null;
  rotated_at: string | null;
  grace_until: string | null;
};

/** A record together with its raw key: the answer of create, rotate and roll, and of nothing else. */
export type ApiKeyWithSecret = ApiKey & { key: string };

export type ApiKeyUse = Pick<ApiKeyUseItem, 'method' | 'route' | 'status' | 'at'>;

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

/** The record without a predecessor in grace. */
export const withoutGrace = (item: ApiKeyItem): ApiKeyItem => ({
  ...item,
  grace_key_hash: undefined,
  grace_until: undefined,
});

const versionIs = '#version = :version';
/** One key range (`:sk` prefix) of the organization's partition. */
const inRange = 'pk = :pk AND begins_with(sk, :sk)';
const notDeleted = 'attribute_not_exists(deleted_at)';

/** What a refused API key write answers. */
const apiKeyConflicts = {
  'key-changed': () => new ConflictError('The API key was changed by another request; read it again and retry'),
};

/** A key of the organization that is not deleted, read strongly so that its version is current. */
export async function getLiveApiKey(orgId: string, keyId: string): Promise<ApiKeyItem | undefined> {
  const result = await table.get({ Key: apiKeyKeys.byId(orgId, keyId), ConsistentRead: true });
  const item = result.Item as ApiKeyItem | undefined;
  return item && !item.deleted_at ? item : undefined;
}

/** The organization's keys that are not deleted, oldest first (key ids start with their creation time). */
export async function listApiKeysOfOrganization(input: {
  orgId: string;
  limit: number;
  offset: number;
}): Promise<Page<ApiKeyItem>> {
  return queryPage<ApiKeyItem>(
    {
      KeyConditionExpression: inRange,
      FilterExpression: notDeleted,
      ExpressionAttributeValues: { ':pk': tenantPk(input.orgId), ':sk': KEY_PREFIX },
    },
    { limit: input.limit, offset: input.offset },
  );
}

/** A key's uses, newest first; uses past their retention but not yet removed by TTL are left out. */
export async function listUsesOfApiKey(input: {
  orgId: string;
  keyId: string;
  now: Date;
  limit: number;
  offset: number;
}): Promise<Page<ApiKeyUse>> {
  return queryPage<ApiKeyUse>(
    {
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: 'expires_at > :now',
      ExpressionAttributeValues: {
        ':pk': apiKeyKeys.usesPk(input.orgId, input.keyId),
        ':now': epochSeconds(input.now),
      },
      ProjectionExpression: '#method, #route, #status, #at',
      ExpressionAttributeNames: { '#method': 'method', '#route': 'route', '#status': 'status', '#at': 'at' },
      ScanIndexForward: false,
    },
    { limit: input.limit, offset: input.offset },
  );
}

/** One use of a key, as the authenticator appends it: kept for the retention period, then removed by TTL. */
export function apiKeyUseItem(input: {
  orgId: string;
  keyId: string;
  use: Pick<ApiKeyUse, 'method' | 'route' | 'status'>;
  now: Date;
}): ApiKeyUseItem {
  const at = input.now.toISOString();
  return {
    ...apiKeyKeys.use(input.orgId, input.keyId, at, randomBase62(6)),
    key_id: input.keyId,
    ...input.use,
    at,
    expires_at: epochSeconds(input.now) + USAGE_RETENTION_DAYS * 86_400,
  };
}

function lookupItem(record: ApiKeyItem, keyHash: string, graceUntil?: string): ApiKeyLookupItem {
  return {
    ...apiKeyKeys.lookup(keyHash),
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

/** Creates a key: the record and the lookup item of its secret. */
export async function putNewApiKey(record: ApiKeyItem): Promise<void> {
  await transact([
    { Put: { Item: record, ConditionExpression: itemIsNew }, reason: 'key-exists' },
    {
      Put: { Item: lookupItem(record, record.key_hash), ConditionExpression: itemIsNew },
      reason: 'key-exists',
    },
  ]);
}

/**
 * Writes a changed record and everything authentication reads about it in one transaction: the live
 * lookup items are put whole (never updated, so a lookup item that TTL removed cannot come back half
 * filled), and every hash the record no longer vouches for is deleted. The record's version condition
 * turns a concurrent change into a 409 instead of a lookup item that disagrees with its record.
 */
export async function saveApiKeyChange(before: ApiKeyItem, after: ApiKeyItem, now: Date): Promise<void> {
  const live = liveLookups(after, now);
  const kept = new Set(live.map((item) => item.pk));
  const stale = [before.key_hash, before.grace_key_hash]
    .filter((hash): hash is string => hash !== undefined)
    .map((hash) => apiKeyKeys.lookup(hash))
    .filter((key) => !kept.has(key.pk));
  await transact(
    [
      {
        Put: {
          Item: after,
          ConditionExpression: versionIs,
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':version': before.version },
        },
        reason: 'key-changed',
      },
      ...live.map((item) => ({ Put: { Item: item } })),
      ...stale.map((key) => ({ Delete: { Key: key } })),
    ],
    apiKeyConflicts,
  );
}
