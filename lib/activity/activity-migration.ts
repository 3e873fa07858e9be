import { ACTOR_TYPES, type ActorType, expiryOf } from '#lib/activity/activity-keys';
import { activityItem, countWrites } from '#lib/activity/activity-log';
import { itemExists } from '#lib/db/conditions';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { sumOverOrganizations } from '#lib/identity/organizations';

/**
 * The move of activity entries written before the log had partitions of its own: they sat in the
 * organization's partition (`T#<org>` / `ACTIVITY#<at>#<nonce>`), never expiring, where nothing reads
 * them any more but every Query of the partition still pays for them. Each is moved by one transaction
 * that writes it (at its own time, with its own nonce) and its counts in the log's partitions and
 * deletes the old item on condition that it is still there, so a second run, or two at once, move no
 * entry twice. An entry already past the retention window is only deleted.
 *
 * Run once per installation that has such entries: infra/migrations/activity-partitions.ts.
 */

const LEGACY_PREFIX = 'ACTIVITY#';

export interface MoveResult {
  moved: number;
  expired: number;
}

const actorTypeOf = (value: unknown): ActorType =>
  ACTOR_TYPES.includes(value as ActorType) ? (value as ActorType) : 'system';

/** Moves one organization's old entries; answers how many were moved and how many were past retention. */
export async function moveLegacyActivity(orgId: string, now: Date): Promise<MoveResult> {
  const result: MoveResult = { moved: 0, expired: 0 };
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': LEGACY_PREFIX },
      Limit: 100,
      ExclusiveStartKey: startKey,
    });
    for (const old of page.Items ?? []) {
      const key = { pk: String(old.pk), sk: String(old.sk) };
      const removal = { Delete: { Key: key, ConditionExpression: itemExists }, reason: 'moved' };
      const at = new Date(String(old.created_at ?? String(old.sk).split('#')[1]));
      try {
        if (Number.isNaN(at.getTime()) || expiryOf(at) <= now.getTime() / 1000) {
          await transact([removal]);
          result.expired += 1;
          continue;
        }
        const item = activityItem(
          orgId,
          {
            actor_type: actorTypeOf(old.actor_type),
            actor_id: String(old.actor_id ?? 'system'),
            action: String(old.action ?? 'unknown'),
            ...(typeof old.entity_type === 'string' ? { entity_type: old.entity_type } : {}),
            ...(typeof old.entity_id === 'string' ? { entity_id: old.entity_id } : {}),
            ...(old.metadata && typeof old.metadata === 'object' ? { metadata: old.metadata } : {}),
          },
          at,
          String(old.sk).split('#').at(-1),
        );
        await transact([{ Put: { Item: item } }, ...countWrites(orgId, item, at), removal]);
        result.moved += 1;
      } catch (error) {
        if (!isConditionFailed(error, 'moved')) throw error;
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return result;
}

/** Moves the old entries of every organization. */
export const moveAllLegacyActivity = (now: Date) =>
  sumOverOrganizations((orgId) => moveLegacyActivity(orgId, now), { moved: 0, expired: 0 });
