import { sha256 } from '#lib/crypto/secrets';
import { ConflictError } from '#lib/errors';
import { loadKey, requireKeyManager } from '#lib/identity/api-key-access';
import { maskApiKey, newApiKey } from '#lib/identity/api-key-format';
import {
  type ApiKeyItem,
  type ApiKeyWithSecret,
  saveApiKeyChange,
  toApiKey,
  withoutGrace,
} from '#lib/identity/api-key-records';
import type { RequestContext } from '#lib/kernel/context';

const HOUR_MS = 3_600_000;

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
  const now = ctx.ports.clock.now();
  if (before.revoked_at) throw new ConflictError('The API key is revoked; create a new key');
  if (!before.active) throw new ConflictError('The API key is inactive; activate it first');
  if (before.key_expires_at && new Date(before.key_expires_at) <= now) {
    throw new ConflictError('The API key has expired; create a new key');
  }
  const key = newApiKey(orgId);
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
  await saveApiKeyChange(before, after, now);
  return { ...toApiKey(after), key };
}
