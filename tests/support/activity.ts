import { ACTOR_TYPES, activityKeys } from '#lib/activity/activity-keys';
import { table } from '#lib/db/table';

/**
 * Every activity entry of an organization as stored, oldest first: the entries of its four actor-type
 * partitions (lib/activity/activity-keys.ts), for tests that check what a change recorded.
 */
export async function activityOf(orgId: string): Promise<Record<string, unknown>[]> {
  const partitions = await Promise.all(
    ACTOR_TYPES.map(async (type) => {
      const items: Record<string, unknown>[] = [];
      let startKey: Record<string, unknown> | undefined;
      do {
        const result = await table.query({
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': activityKeys.entryPk(orgId, type) },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        });
        items.push(...(result.Items ?? []));
        startKey = result.LastEvaluatedKey;
      } while (startKey);
      return items;
    }),
  );
  return partitions.flat().sort((a, b) => String(a.sk).localeCompare(String(b.sk)));
}
