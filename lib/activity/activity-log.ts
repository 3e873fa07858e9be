import {
  ACTIVITY_SHARDS,
  type ActivityItem,
  type ActivityRecord,
  type ActorType,
  activityKeys,
  expiryOf,
  hourOf,
  toActivityRecord,
} from '#lib/activity/activity-keys';
import { randomBase62 } from '#lib/crypto/secrets';
import { counterWrite, shardOf } from '#lib/db/counters';
import { type TransactItem, transact } from '#lib/db/transactions';
import type { Principal } from '#lib/kernel/context';

/**
 * The organization's activity log: who did what to which record, when (keys, retention and counts:
 * lib/activity/activity-keys.ts). Entries are append-only and never carry secret values. An entry is
 * written with its counts, in the transaction of the change it records, so that the log holds exactly
 * the changes that happened and its counts exactly the entries.
 */
export interface ActivityEntry {
  actor_type: ActorType;
  actor_id: string;
  action: string;
  entity_type?: string;
  entity_id?: string;
  metadata?: Record<string, unknown>;
}

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

/** The stored entry, written at `now` (or, when moved from elsewhere, at its own time, with its own nonce). */
export function activityItem(
  orgId: string,
  entry: ActivityEntry & { recorded_by?: string },
  now: Date,
  nonce = randomBase62(12),
): ActivityItem {
  const at = now.toISOString();
  const sort = activityKeys.sort(at, nonce);
  return {
    pk: activityKeys.entryPk(orgId, entry.actor_type),
    sk: sort,
    gsi1pk: activityKeys.byActorPk(orgId, entry.actor_type, entry.actor_id),
    gsi1sk: sort,
    gsi2pk: activityKeys.byActionPk(orgId, entry.actor_type, entry.action),
    gsi2sk: sort,
    id: `act_${nonce}`,
    actor_type: entry.actor_type,
    actor_id: entry.actor_id,
    action: entry.action,
    entity_type: entry.entity_type ?? null,
    entity_id: entry.entity_id ?? null,
    metadata: entry.metadata ?? {},
    ...(entry.recorded_by ? { recorded_by: entry.recorded_by } : {}),
    created_at: at,
    expires_at: expiryOf(now),
  };
}

/** The entry's hour, action and actor counts: `total` and its actor type's count, each raised by one. */
export function countWrites(orgId: string, item: ActivityItem, now: Date): TransactItem[] {
  const hour = hourOf(now);
  const shard = shardOf(ACTIVITY_SHARDS);
  const pk = activityKeys.countPk(orgId);
  const add = { total: 1, [item.actor_type]: 1 };
  // A count outlives its entries by a day: reads never look past the retention window anyway.
  const expires_at = item.expires_at + 86_400;
  return [
    counterWrite({ key: { pk, sk: activityKeys.hourCount(hour, shard) }, add, set: { hour, expires_at } }),
    counterWrite({
      key: { pk, sk: activityKeys.actionCount(item.action, hour, shard) },
      add,
      set: {
        hour,
        action: item.action,
        expires_at,
        gsi1pk: activityKeys.hourlyActionsPk(orgId),
        gsi1sk: activityKeys.hourlyActionSort(hour, item.action, shard),
      },
    }),
    counterWrite({ key: { pk, sk: activityKeys.actorCount(item.actor_id, hour, shard) }, add, set: { expires_at } }),
  ];
}

/**
 * The entry and its counts as writes for the transaction that makes the change it records.
 *
 * @example
 * const entry = { ...activityActor(principal), action: 'product.created' };
 * await transact([productPut, ...activityWrites(orgId, entry, now)]);
 */
export function activityWrites(orgId: string, entry: ActivityEntry, now: Date): TransactItem[] {
  const item = activityItem(orgId, entry, now);
  return [{ Put: { Item: item } }, ...countWrites(orgId, item, now)];
}

/** Writes an entry (and its counts) on its own, for changes that are not a transaction of their own. */
export async function recordActivity(
  orgId: string,
  entry: ActivityEntry,
  now: Date,
  recordedBy?: string,
): Promise<ActivityRecord> {
  const item = activityItem(orgId, { ...entry, ...(recordedBy ? { recorded_by: recordedBy } : {}) }, now);
  await transact([{ Put: { Item: item } }, ...countWrites(orgId, item, now)]);
  return toActivityRecord(item);
}
