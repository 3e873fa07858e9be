import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import { jobKeys } from '#lib/jobs/job-keys';

/**
 * The stored job items of an organization whose sort key begins with `prefix` (`JOB#` for all of them),
 * read consistently from the jobs' own partition, for tests of the areas that queue jobs.
 */
export async function jobItemsOf(orgId: string, prefix = 'JOB#'): Promise<Record<string, unknown>[]> {
  const { pk } = jobKeys.byId(orgId, '');
  const result = await db.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
      ConsistentRead: true,
    }),
  );
  return result.Items ?? [];
}
