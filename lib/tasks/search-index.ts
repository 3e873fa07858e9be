import { writeMany } from '#lib/db/batch';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import { isConditionFailed, table } from '#lib/db/table';

/**
 * Full-text search over task titles and descriptions without reading every task: an inverted index of
 * postings, one small item per (word, task), under the tenant's partition.
 *
 * | record | pk | sk |
 * |---|---|---|
 * | posting | `T#<org>` | `TASKWORD#<word>#<task id>` |
 *
 * A query word is looked up as a prefix of the sort key, so `deploy` finds the postings of `deploy`,
 * `deployment` and `deploys` in one Query. Reads therefore grow with the number of postings that match,
 * not with the number of tasks in the organization.
 *
 * Postings are derived data, written outside the task's transaction: new words before it commits and
 * stale words after it. So the index may briefly hold a posting too many (a stale word, or the postings
 * of a create that failed), never one too few; every candidate is checked against the task's own text
 * (`matchesSearch`) before it is answered.
 *
 * Each posting carries the task `version` it was written for. An update removes its stale words only
 * where the posting is no newer than its own version: a later update that committed in between may
 * have put the same word back, and its posting has to stay.
 */
export const postingPrefix = 'TASKWORD#';

const postingKey = (orgId: string, word: string, taskId: number): TableKey => ({
  pk: tenantPk(orgId),
  sk: `${postingPrefix}${word}#${pad(taskId)}`,
});

/** Words longer than this are indexed by their first 64 characters (a prefix search still finds them). */
const MAX_WORD_LENGTH = 64;

/**
 * The words of a text: runs of letters and digits, lower-cased, accents removed (`Café` → `cafe`).
 *
 * @example
 * words('Fix the Café-menu, v2!') // ['fix', 'the', 'cafe', 'menu', 'v2']
 */
export function words(text: string): string[] {
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  return (folded.match(/[\p{L}\p{N}]+/gu) ?? []).map((word) => word.slice(0, MAX_WORD_LENGTH));
}

/** The distinct words a task is indexed under. */
export const taskWords = (task: { title: string; description?: string | null }): Set<string> =>
  new Set([...words(task.title), ...words(task.description ?? '')]);

/** Whether every word of the query begins some word of the task: the check each candidate passes. */
export function matchesSearch(queryWords: string[], task: { title: string; description?: string | null }): boolean {
  const own = [...taskWords(task)];
  return queryWords.every((wanted) => own.some((word) => word.startsWith(wanted)));
}

/**
 * Adds the postings of `words` for task `taskId`, written for its `version` (the version the write
 * that brings the words creates).
 */
export async function addPostings(
  orgId: string,
  taskId: number,
  words: Iterable<string>,
  version: number,
): Promise<void> {
  await writeMany({
    puts: [...words].map((word) => ({ ...postingKey(orgId, word, taskId), task_id: taskId, version })),
  });
}

/** Conditional deletes sent side by side when an update removes words. */
const PARALLEL_DELETES = 8;

const writtenNoLaterThan = 'attribute_not_exists(#version) OR #version <= :version';

/**
 * Removes the postings of `words` for task `taskId`. With `writtenUpTo` (after an update), only the
 * postings written for that version or an earlier one go; without it (the task is gone, or was never
 * created), all of them.
 */
export async function removePostings(
  orgId: string,
  taskId: number,
  words: Iterable<string>,
  writtenUpTo?: number,
): Promise<void> {
  const keys = [...words].map((word) => postingKey(orgId, word, taskId));
  if (writtenUpTo === undefined) {
    await writeMany({ deletes: keys });
    return;
  }
  for (let start = 0; start < keys.length; start += PARALLEL_DELETES) {
    await Promise.all(
      keys.slice(start, start + PARALLEL_DELETES).map(async (Key) => {
        try {
          await table.delete({
            Key,
            ConditionExpression: writtenNoLaterThan,
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': writtenUpTo },
          });
        } catch (error) {
          // A newer write put the word back: its posting stays.
          if (!isConditionFailed(error)) throw error;
        }
      }),
    );
  }
}

/** Which words to add and which to remove when a task's text changes. */
export function postingChange(before: Set<string>, after: Set<string>) {
  return {
    added: [...after].filter((word) => !before.has(word)),
    removed: [...before].filter((word) => !after.has(word)),
  };
}

/** The first page of each word's postings is this small, so that a rare word settles the search early. */
const FIRST_PAGE = 500;

/**
 * The ids of the tasks that may match every query word. Each word's postings are read by a prefix
 * Query, all words side by side, a page at a time; as soon as one word's postings are complete, its
 * tasks (intersected with any other complete word's) are the candidates and the other words stop
 * being read: the caller checks every word against each candidate's text anyway. So a search reads the
 * postings of its most selective word (or little more), whatever the size of the others.
 */
export async function searchCandidates(orgId: string, queryWords: string[]): Promise<Set<number>> {
  const readers = [...new Set(queryWords)].map((word) => ({
    word,
    ids: new Set<number>(),
    startKey: undefined as Record<string, unknown> | undefined,
    complete: false,
  }));
  for (let round = 0; ; round += 1) {
    await Promise.all(
      readers.map(async (reader) => {
        const result = await table.query({
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': `${postingPrefix}${reader.word}` },
          ProjectionExpression: 'task_id',
          ExclusiveStartKey: reader.startKey,
          ...(round === 0 ? { Limit: FIRST_PAGE } : {}),
        });
        for (const item of result.Items ?? []) reader.ids.add(Number(item.task_id));
        reader.startKey = result.LastEvaluatedKey;
        reader.complete = !result.LastEvaluatedKey;
      }),
    );
    const complete = readers.filter((reader) => reader.complete).sort((a, b) => a.ids.size - b.ids.size);
    const [smallest, ...others] = complete;
    if (smallest) {
      return new Set([...smallest.ids].filter((id) => others.every((reader) => reader.ids.has(id))));
    }
  }
}
