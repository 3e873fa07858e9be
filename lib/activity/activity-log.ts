import { randomBase62 } from '#lib/crypto/secrets';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import type { Principal } from '#lib/kernel/context';

/**
 * The organization's activity log: who did what to which record, when. Entries are append-only and
 * never carry secret values. Sort keys start with the time, so the partition reads newest-last.
 */
export interface ActivityEntry {
  actor_type: 'agent' | 'system' | 'user' | 'api_key';
  actor_id: string;
  action: string;
  entity_type?: string;
  entity_id?: string;
  metadata?: Record<string, unknown>;
}

export const activityKey = (orgId: string, at: string, nonce: string) => ({
  pk: tenantPk(orgId),
  sk: `ACTIVITY#${at}#${nonce}`,
});

/**
 * The actor of a request: a user acts as `user` (`user:<id>`), an API key as `api_key`
 * (`api_key:<keyId>`), even when a user created the key, so the log names the credential that acted.
 */
export function activityActor(principal: Principal): Pick<ActivityEntry, 'actor_type' | 'actor_id'> {
  if (principal.method === 'api_key') {
    return { actor_type: 'api_key', actor_id: `api_key:${principal.keyId ?? 'unknown'}` };
  }
  return { actor_type: 'user', actor_id: `user:${principal.userId}` };
}

function activityItem(orgId: string, entry: ActivityEntry, now: Date) {
  const at = now.toISOString();
  const nonce = randomBase62(8);
  return { ...activityKey(orgId, at, nonce), id: `${at}#${nonce}`, ...entry, created_at: at };
}

/**
 * The entry as a write for the transaction that makes the change it records, so that the log holds
 * exactly the changes that happened.
 *
 * @example
 * await transact([productPut, activityWrite(orgId, { ...activityActor(principal), action: 'product.created' }, now)]);
 */
export function activityWrite(orgId: string, entry: ActivityEntry, now: Date): TransactItem {
  return { Put: { Item: activityItem(orgId, entry, now) } };
}

export async function recordActivity(orgId: string, entry: ActivityEntry, now: Date): Promise<void> {
  await table.put({ Item: activityItem(orgId, entry, now) });
}
