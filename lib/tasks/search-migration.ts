import { writeMany } from '#lib/db/batch';
import { prefixEnd, type TableKey, tenantPk } from '#lib/db/keys';
import { isConditionFailed, table } from '#lib/db/table';
import { sumOverOrganizations } from '#lib/identity/organizations';
import { addPostings, LEGACY_POSTING_PREFIX, postingChange, removePostings, taskTerms } from '#lib/tasks/search-index';
import { type TaskItem, taskKeys, versionIs } from '#lib/tasks/task-keys';
import { getTaskItem } from '#lib/tasks/task-records';

/**
 * The move of task search from whole-word postings in the organization's partition to the term index
 * (lib/tasks/search-index.ts). Each task without `terms_indexed` gets the postings of its terms and
 * then the mark, on condition that it is still the version whose text they were taken from; a task
 * that changed meanwhile is taken again (and the postings of terms it no longer has go, as an update's
 * would). Then the organization's whole-word postings are deleted: nothing reads them any more.
 * Safe to run again and while the service runs: an update of a task not yet marked writes all its
 * terms itself.
 *
 * Run once per installation that has tasks from before the term index (and after restoring a backup
 * taken before it): infra/migrations/task-search-terms.ts.
 */

export interface IndexResult {
  /** Tasks indexed by this run. */
  indexed: number;
  /** Whole-word postings deleted. */
  legacyRemoved: number;
}

/** Indexes one organization's tasks that are not yet, and deletes its whole-word postings. */
export async function indexTasksWithoutTerms(orgId: string): Promise<IndexResult> {
  const result: IndexResult = { indexed: 0, legacyRemoved: 0 };
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      FilterExpression: 'attribute_not_exists(terms_indexed)',
      ExpressionAttributeValues: {
        ':pk': tenantPk(orgId),
        ':from': taskKeys.prefix,
        ':to': prefixEnd(taskKeys.prefix),
      },
      Limit: 100,
      ExclusiveStartKey: startKey,
    });
    for (const item of (page.Items ?? []) as TaskItem[]) {
      if (await indexTask(orgId, item)) result.indexed += 1;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  result.legacyRemoved = await removeLegacyPostings(orgId);
  return result;
}

/**
 * Writes the postings of a task's terms and marks it, while it is the version `read`; answers whether
 * this run marked it (false when it was gone, or marked by an update meanwhile).
 */
export async function indexTask(orgId: string, read: TaskItem): Promise<boolean> {
  let item: TaskItem | undefined = read;
  let written = new Set<string>();
  let writtenFor = read.version;
  while (item && !item.terms_indexed) {
    const terms = taskTerms(item);
    await addPostings(orgId, item.id, postingChange(written, terms).added, item.version);
    await removePostings(orgId, item.id, postingChange(written, terms).removed, writtenFor);
    [written, writtenFor] = [terms, item.version];
    try {
      await table.update({
        Key: taskKeys.byId(orgId, item.id),
        UpdateExpression: 'SET terms_indexed = :indexed',
        ConditionExpression: versionIs,
        ExpressionAttributeValues: { ':indexed': true, ':version': item.version },
        reason: 'stale',
      });
      return true;
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
    }
    item = await getTaskItem({ orgId, id: read.id, consistent: true });
  }
  // Gone, or indexed by an update: the postings of terms it does not have (any more) go.
  const kept = item ? taskTerms(item) : new Set<string>();
  await removePostings(orgId, read.id, postingChange(written, kept).removed, writtenFor);
  return false;
}

/** Deletes every whole-word posting of the organization; answers how many. */
async function removeLegacyPostings(orgId: string): Promise<number> {
  let removed = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': tenantPk(orgId),
        ':from': LEGACY_POSTING_PREFIX,
        ':to': prefixEnd(LEGACY_POSTING_PREFIX),
      },
      ProjectionExpression: 'pk, sk',
      ExclusiveStartKey: startKey,
    });
    const keys = (page.Items ?? []) as TableKey[];
    await writeMany({ deletes: keys });
    removed += keys.length;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return removed;
}

/** Indexes the tasks of every organization. */
export const indexAllTasksWithoutTerms = () =>
  sumOverOrganizations((orgId) => indexTasksWithoutTerms(orgId), { indexed: 0, legacyRemoved: 0 });
