import { table } from '#lib/db/table';
import { termKeys } from '#lib/tasks/search-index';
import { termQuery } from '#lib/tasks/task-search';

/** Reads of the task search index (lib/tasks/search-index.ts) for tests that check what it holds. */

/** The task ids the index holds under `term`, newest first, read strongly consistently. */
export async function postedIds(orgId: string, term: string): Promise<number[]> {
  const { Items = [] } = await table.query({ ...termQuery(orgId, term), ConsistentRead: true });
  return Items.map((item) => Number(item.task_id));
}

/** The terms the index holds for task `taskId` (the whole partition of a test's small organization). */
export async function indexedTerms(orgId: string, taskId: number): Promise<Set<string>> {
  const terms = new Set<string>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': termKeys.pk(orgId) },
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    for (const item of page.Items ?? []) {
      if (item.task_id === taskId) terms.add(String(item.sk).slice(0, String(item.sk).lastIndexOf('#')));
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return terms;
}
