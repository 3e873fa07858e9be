import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { randomBase62 } from '#lib/identity/secrets';

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

export async function recordActivity(orgId: string, entry: ActivityEntry, now: Date): Promise<void> {
  const at = now.toISOString();
  const nonce = randomBase62(8);
  await table.put({
    Item: { ...activityKey(orgId, at, nonce), id: `${at}#${nonce}`, ...entry, created_at: at },
  });
}
