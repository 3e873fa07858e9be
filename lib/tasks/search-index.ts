import { writeMany } from '#lib/db/batch';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import { isConditionFailed, table } from '#lib/db/table';

/**
 * Full-text search over task titles and descriptions that reads a page of matches, not all of them: an
 * inverted index of postings, one small item per (term, task), in a partition of the organization's
 * own. A task's terms are every prefix of every word of its title and description (`deploy` gives `d`,
 * `de`, … `deploy`), so a query word is one exact term, whichever words it begins, and a term's postings
 * run by task id: a Query read backwards answers the newest matching tasks first, as the list is sorted,
 * and stops where the page does (lib/tasks/task-search.ts).
 *
 * | record | pk | sk |
 * |---|---|---|
 * | posting | `T#<org>#TASKTERMS` | `<term>#<task id>` |
 *
 * Terms have no `#` (words are letters and digits), so `<term>#` selects one term's postings exactly.
 * A task is indexed under at most `MAX_TASK_TERMS` terms, taken from its title and then its description
 * in order: the longest description, 10,000 characters of prose, fits; only a text of long unrelated
 * tokens (a pasted log, hashes) is found by its first part only.
 *
 * Postings are derived data, written outside the task's transaction (a task may have more terms than
 * a transaction holds writes): new terms before it commits and stale terms after it. So the index may
 * briefly hold a posting too many (a stale term, or the postings of a create that failed), never one too
 * few; every task a search answers is checked against its own text (`matchesSearch`).
 *
 * Each posting carries the task `version` it was written for. An update removes its stale terms only
 * where the posting is no newer than its own version: a later update that committed in between may
 * have put the same term back, and its posting has to stay.
 *
 * Tasks written before this index existed were indexed by whole words in the organization's partition
 * (`T#<org>` / `TASKWORD#<word>#<task id>`, `legacyPostingKeys`) and carry no `terms_indexed` mark; their
 * next write, or infra/migrations/task-search-terms.ts, indexes them here and removes those postings.
 */
export const termKeys = {
  pk: (orgId: string): string => `${tenantPk(orgId)}#TASKTERMS`,
  posting: (orgId: string, term: string, taskId: number): TableKey => ({
    pk: termKeys.pk(orgId),
    sk: `${term}#${pad(taskId)}`,
  }),
  /** The sort key prefix of one term's postings. */
  term: (term: string): string => `${term}#`,
};

/** The keys of the whole-word postings a task written before the term index has (or may have). */
export const legacyPostingKeys = (orgId: string, taskId: number, taskWords: Iterable<string>): TableKey[] =>
  [...taskWords].map((word) => ({ pk: tenantPk(orgId), sk: `TASKWORD#${word}#${pad(taskId)}` }));

/** The sort key prefix of every whole-word posting (the migration's cleanup). */
export const LEGACY_POSTING_PREFIX = 'TASKWORD#';

/** Words longer than this are indexed by their first 64 characters (a prefix search still finds them). */
const MAX_WORD_LENGTH = 64;

/** Terms one task is indexed under, at most: its title's first, then its description's. */
export const MAX_TASK_TERMS = 2000;

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

/** The distinct words of a task's title and description. */
export const taskWords = (task: { title: string; description?: string | null }): Set<string> =>
  new Set([...words(task.title), ...words(task.description ?? '')]);

/**
 * The terms a task is indexed under: every prefix (in characters) of each of its words, title first, at
 * most `MAX_TASK_TERMS`.
 *
 * @example
 * taskTerms({ title: 'Fix it' }) // Set { 'f', 'fi', 'fix', 'i', 'it' }
 */
export function taskTerms(task: { title: string; description?: string | null }): Set<string> {
  const terms = new Set<string>();
  for (const word of taskWords(task)) {
    let term = '';
    for (const char of word) {
      term += char;
      terms.add(term);
      if (terms.size >= MAX_TASK_TERMS) return terms;
    }
  }
  return terms;
}

/** Whether every word of the query begins some word of the task: the check each candidate passes. */
export function matchesSearch(queryWords: string[], task: { title: string; description?: string | null }): boolean {
  const own = [...taskWords(task)];
  return queryWords.every((wanted) => own.some((word) => word.startsWith(wanted)));
}

/**
 * The terms a query looks up: its distinct words, less those another of its words begins with (`de
 * deploy` needs only `deploy`: a task with a word beginning `deploy` has one beginning `de`).
 *
 * @example
 * searchTerms(['de', 'deploy', 'docs']) // ['deploy', 'docs']
 */
export function searchTerms(queryWords: readonly string[]): string[] {
  const distinct = [...new Set(queryWords)];
  return distinct.filter((word) => !distinct.some((other) => other !== word && other.startsWith(word)));
}

/**
 * Adds the postings of `terms` for task `taskId`, written for its `version` (the version the write
 * that brings the terms creates).
 */
export async function addPostings(
  orgId: string,
  taskId: number,
  terms: Iterable<string>,
  version: number,
): Promise<void> {
  await writeMany({
    puts: [...terms].map((term) => ({ ...termKeys.posting(orgId, term, taskId), task_id: taskId, version })),
  });
}

/** Conditional deletes sent side by side when an update removes terms. */
const PARALLEL_DELETES = 8;

const writtenNoLaterThan = 'attribute_not_exists(#version) OR #version <= :version';

/**
 * Removes the postings of `terms` for task `taskId`. With `writtenUpTo` (after an update), only the
 * postings written for that version or an earlier one go; without it (the task is gone, or was never
 * created), all of them.
 */
export async function removePostings(
  orgId: string,
  taskId: number,
  terms: Iterable<string>,
  writtenUpTo?: number,
): Promise<void> {
  const keys = [...terms].map((term) => termKeys.posting(orgId, term, taskId));
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
          // A newer write put the term back: its posting stays.
          if (!isConditionFailed(error)) throw error;
        }
      }),
    );
  }
}

/** Which terms to add and which to remove when a task's text changes. */
export function postingChange(before: Set<string>, after: Set<string>) {
  return {
    added: [...after].filter((term) => !before.has(term)),
    removed: [...before].filter((term) => !after.has(term)),
  };
}

/**
 * The postings a write of a task moves: from its terms as read (`before`; none for a new task) to its
 * terms as written (`after`; none when it goes). A task written before the term index (no
 * `terms_indexed`) may have none of its terms yet: all of `after` are added.
 */
export function termChange(
  before: { title: string; description?: string | null; terms_indexed?: boolean } | undefined,
  after: { title: string; description?: string | null } | undefined,
) {
  const termsBefore = before ? taskTerms(before) : new Set<string>();
  const termsAfter = after ? taskTerms(after) : new Set<string>();
  const change = postingChange(termsBefore, termsAfter);
  return {
    added: before && !before.terms_indexed ? [...termsAfter] : change.added,
    removed: change.removed,
  };
}
