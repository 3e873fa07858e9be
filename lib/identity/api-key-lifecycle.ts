import { randomBase62, sha256 } from '#lib/crypto/secrets';
import type { Page, PageRequest } from '#lib/db/paging';
import { ConflictError, ValidationError } from '#lib/errors';
import { loadKey, requireKeyManager } from '#lib/identity/api-key-access';
import { maskApiKey, newApiKey } from '#lib/identity/api-key-format';
import {
  type ApiKey,
  type ApiKeyItem,
  type ApiKeyWithSecret,
  apiKeyKeys,
  listApiKeysOfOrganization,
  putNewApiKey,
  saveApiKeyChange,
  toApiKey,
  withoutGrace,
} from '#lib/identity/api-key-records';
import { SCOPES, type Scope } from '#lib/identity/roles';
import type { RequestContext } from '#lib/kernel/context';

/**
 * Issuing organization API keys: list, show, create, change, delete and revoke. The raw key leaves the
 * service only in the answer of create (and of rotate and roll, in api-key-rotation).
 */

/** `write` implies `read` and `admin` both, so duplicates are dropped and the order is canonical. */
const normalizeScopes = (scopes: readonly Scope[]): Scope[] => SCOPES.filter((scope) => scopes.includes(scope));

/**
 * Key ids sort by creation time (so lists come oldest first without a separate index), followed by
 * enough randomness that they cannot be guessed.
 */
const newKeyId = (now: Date): string => `key_${now.getTime().toString(36).padStart(9, '0')}${randomBase62(12)}`;

export async function listApiKeys(ctx: RequestContext, orgId: string, page: PageRequest): Promise<Page<ApiKey>> {
  await requireKeyManager(ctx, orgId);
  const result = await listApiKeysOfOrganization({ orgId, ...page });
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

export async function createApiKey(ctx: RequestContext, orgId: string, input: NewApiKey): Promise<ApiKeyWithSecret> {
  const principal = await requireKeyManager(ctx, orgId);
  const now = ctx.ports.clock.now();
  if (input.expires_at !== undefined && new Date(input.expires_at) <= now) {
    throw new ValidationError('The request is not valid', [{ path: 'expires_at', message: 'must be in the future' }]);
  }
  const key = newApiKey(orgId);
  const id = newKeyId(now);
  const at = now.toISOString();
  const record: ApiKeyItem = {
    ...apiKeyKeys.byId(orgId, id),
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
  await putNewApiKey(record);
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
      { path: 'active', message: 'the key is revoked' },
    ]);
  }
  const now = ctx.ports.clock.now();
  const after: ApiKeyItem = {
    ...before,
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.scopes !== undefined ? { scopes: normalizeScopes(changes.scopes) } : {}),
    ...(changes.active !== undefined ? { active: changes.active } : {}),
    updated_at: now.toISOString(),
    version: before.version + 1,
  };
  await saveApiKeyChange(before, after, now);
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
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  await saveApiKeyChange(
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
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const after: ApiKeyItem = {
    ...withoutGrace(before),
    active: false,
    revoked_at: at,
    updated_at: at,
    version: before.version + 1,
  };
  await saveApiKeyChange(before, after, now);
  return toApiKey(after);
}
