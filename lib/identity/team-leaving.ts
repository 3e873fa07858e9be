import { tenantPk } from '#lib/db/keys';
import { type QueryResult, table } from '#lib/db/table';
import { itemExists, type TransactItem } from '#lib/db/transactions';
import { identityKeys } from '#lib/identity/keys';

/**
 * The writes that take a user out of every team of an organization, each with its team's
 * member_count, for when the user leaves the organization or is erased. One Query over the
 * organization's team members: leaving is rare, so no per-user index is kept for it.
 */
export async function teamLeavingWrites(orgId: string, userId: number): Promise<TransactItem[]> {
  const writes: TransactItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page: QueryResult = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :member)',
      FilterExpression: 'user_id = :user',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':member': 'TEAMMEMBER#', ':user': userId },
      ProjectionExpression: 'pk, sk, team_id',
      ExclusiveStartKey: startKey,
    });
    for (const member of page.Items ?? []) {
      writes.push(
        { Delete: { Key: { pk: member.pk, sk: member.sk } } },
        {
          Update: {
            Key: identityKeys.team(orgId, member.team_id as number),
            UpdateExpression: 'ADD member_count :minus',
            ConditionExpression: itemExists,
            ExpressionAttributeValues: { ':minus': -1 },
          },
        },
      );
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return writes;
}
