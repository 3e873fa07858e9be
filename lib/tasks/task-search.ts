import { getMany } from '#lib/db/batch';
import { prefixEnd } from '#lib/db/keys';
import type { PageRequest } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { searchTerms, termKeys } from '#lib/tasks/search-index';
import { type TaskItem, taskKeys } from '#lib/tasks/task-keys';

/**
 * The read side of task search (the index: lib/tasks/search-index.ts): a page of the tasks that match,
 * newest first, for a cost that follows the page asked for, not the number of matches.
 *
 * - One term and no other filter: the term's postings are the matches, newest first. One Query reads
 *   the postings up to the end of the page, one BatchGetItem the page's tasks; beside them, one COUNT
 *   Query counts the postings up to `countedUpTo`. A deep `offset` reads the postings before it (small
 *   items), not their tasks.
 * - Several terms, or other filters (status, assignee…): the postings of the rarest term (by those
 *   counts) are walked newest first and each candidate task is checked against every word and filter,
 *   a chunk at a time, until the page is full; when the rarest term has at most `examinedInFull`
 *   postings all of them are checked, so that small results have exact totals. The walk stops after
 *   `maxExamined` candidates: a page past them is not reached.
 *
 * `total` is exact when the matches were all counted (`exact`): a term with at most `countedUpTo`
 * postings, or a walk that checked every candidate. Otherwise it is an estimate, never below the
 * matches seen: `countedUpTo` (or the offset reached) for one term, and the share of matches among the
 * candidates checked, times the candidates, for a walk. Keeping an exact count per term would mean a
 * counter update per term of every write (a task has a hundred terms or more), and an exact count of
 * several words would mean reading all their postings: the cost this read exists to avoid.
 */

export interface SearchLimits {
  /** A term's postings are counted up to this many: one COUNT Query (of at most ~60 KB for 1,000). */
  countedUpTo: number;
  /** Candidates of the rarest term all checked, when there are no more than this: one BatchGetItem. */
  examinedInFull: number;
  /** Candidates a walk checks at most, across all its chunks. */
  maxExamined: number;
}

export const SEARCH_LIMITS: SearchLimits = { countedUpTo: 1000, examinedInFull: 100, maxExamined: 1000 };

/** Candidates checked in one chunk at most: four BatchGetItem calls, side by side. */
const MAX_CHUNK = 400;

export interface TaskSearch {
  /** The query's words (lib/tasks/search-index.ts `words`), at least one. */
  queryWords: readonly string[];
  /** Whether a task passes every word and filter, checked on its item. */
  matches: (item: TaskItem) => boolean;
  /** Whether a filter other than the words applies (postings alone then cannot tell the matches). */
  filtered: boolean;
  /**
   * Whether `total` is wanted: without it (GET /search), a search of one term counts nothing and one of
   * several counts only up to `examinedInFull`.
   */
  total?: boolean;
}

export interface SearchPage {
  items: TaskItem[];
  total: number;
  /** Whether `total` counts every match (otherwise an estimate). */
  exact: boolean;
  /** Whether there may be matches after this page. */
  more: boolean;
}

/**
 * A page of the organization's tasks that match `search`, newest first.
 *
 * @example
 * const { items, total, exact } = await searchTasks(orgId, { queryWords: ['deploy'], matches, filtered: false },
 *   { limit: 50, offset: 0 });
 */
export async function searchTasks(
  orgId: string,
  search: TaskSearch,
  page: PageRequest,
  limits: SearchLimits = SEARCH_LIMITS,
): Promise<SearchPage> {
  const terms = searchTerms(search.queryWords);
  const reader = { orgId, limits };
  if (terms.length === 1 && !search.filtered) return termPage(reader, terms[0] as string, search, page);
  return walkPage(reader, terms, search, page);
}

/** Where a search reads, within which limits. */
interface Reader {
  orgId: string;
  limits: SearchLimits;
}

/** The page of one term's postings, each task checked; `total` from the term's count. */
async function termPage(reader: Reader, term: string, search: TaskSearch, page: PageRequest): Promise<SearchPage> {
  const postings = termPostings(reader.orgId, term);
  const counting = search.total === false ? Promise.resolve(undefined) : countPostings(reader, term);
  const ahead = Math.min(page.offset + page.limit, reader.limits.countedUpTo);
  const [counted = uncounted] = await Promise.all([counting, postings.fill(ahead)]);
  if (counted.exact && page.offset >= counted.count) {
    return { items: [], total: counted.count, exact: true, more: false };
  }
  await postings.take(page.offset);
  const items: TaskItem[] = [];
  while (items.length < page.limit && postings.more) {
    // A posting too many (a stale term) is passed over, and the page filled from the next.
    const candidates = await tasksOf(reader.orgId, await postings.take(page.limit - items.length));
    items.push(...candidates.filter(search.matches));
  }
  const seen = page.offset + items.length + (postings.more ? 1 : 0);
  return {
    items,
    total: Math.max(counted.count, counted.exact ? 0 : seen),
    exact: counted.exact,
    more: postings.more,
  };
}

/** A walk of the rarest term's postings, checking each candidate, until the page is full. */
async function walkPage(reader: Reader, terms: string[], search: TaskSearch, page: PageRequest): Promise<SearchPage> {
  const { orgId, limits } = reader;
  const wanted = page.offset + page.limit;
  let chunk = Math.max(wanted, limits.examinedInFull);
  // Without a total, the counts only choose the rarest word and tell a small one: they stop sooner.
  const upTo = search.total === false ? limits.examinedInFull : limits.countedUpTo;
  const counting = Promise.all(terms.map((term) => countPostings(reader, term, upTo)));
  // With one term the walk's first chunk is read beside its count; with several, the counts choose.
  const single = terms.length === 1 ? termPostings(orgId, terms[0] as string) : undefined;
  const [counts] = await Promise.all([counting, single?.fill(Math.min(chunk, MAX_CHUNK))]);
  const rarest = counts.reduce((best, count, index) => (count.count < (counts[best]?.count ?? 0) ? index : best), 0);
  const candidates = counts[rarest] as Counted;
  if (candidates.exact && candidates.count === 0) return { items: [], total: 0, exact: true, more: false };
  const postings = single ?? termPostings(orgId, terms[rarest] as string);
  const inFull = candidates.exact && candidates.count <= limits.examinedInFull;
  const items: TaskItem[] = [];
  let examined = 0;
  let matched = 0;
  while (postings.more && examined < limits.maxExamined && (inFull || matched < wanted)) {
    const ids = await postings.take(Math.min(chunk, MAX_CHUNK, limits.maxExamined - examined));
    examined += ids.length;
    for (const item of await tasksOf(orgId, ids)) {
      if (!search.matches(item)) continue;
      if (matched >= page.offset && matched < wanted) items.push(item);
      matched += 1;
    }
    chunk = nextChunk(wanted - matched, matched, examined, chunk);
  }
  const exact = !postings.more;
  const estimate = examined === 0 ? 0 : Math.round((matched / examined) * Math.max(candidates.count, examined));
  return {
    items,
    total: exact ? matched : Math.max(matched, estimate),
    exact,
    more: matched > wanted || postings.more,
  };
}

/** A chunk checks at least this many candidates (no round trip for a handful). */
const MIN_CHUNK = 25;

/**
 * The candidates to check next: as many as the share of matches so far says the page still needs, and a
 * quarter more; twice the last chunk while none matched.
 */
function nextChunk(missing: number, matched: number, examined: number, last: number): number {
  if (matched === 0) return last * 2;
  return Math.max(MIN_CHUNK, Math.ceil(((missing * examined) / matched) * 1.25));
}

/** The tasks of `ids` that exist, in the order of `ids`. */
async function tasksOf(orgId: string, ids: number[]): Promise<TaskItem[]> {
  if (ids.length === 0) return [];
  const found = await getMany<TaskItem>(ids.map((id) => taskKeys.byId(orgId, id)));
  return found.filter((item): item is TaskItem => item !== undefined);
}

/** The Query of one term's postings, the newest task first. */
export const termQuery = (orgId: string, term: string) => ({
  KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
  ExpressionAttributeValues: {
    ':pk': termKeys.pk(orgId),
    ':from': termKeys.term(term),
    ':to': prefixEnd(termKeys.term(term)),
  },
  ScanIndexForward: false,
});

interface Counted {
  count: number;
  /** Whether `count` is all of them (at most `countedUpTo`). */
  exact: boolean;
}

/** What a search that counts nothing knows of the count: nothing. */
const uncounted: Counted = { count: 0, exact: false };

/** How many postings a term has, counted up to `upTo` (DynamoDB reads them, sends none). */
async function countPostings({ orgId, limits }: Reader, term: string, upTo = limits.countedUpTo): Promise<Counted> {
  const result = await table.query({ ...termQuery(orgId, term), Select: 'COUNT', Limit: upTo + 1 });
  const count = result.Count ?? 0;
  return { count: Math.min(count, upTo), exact: count <= upTo };
}

/**
 * A term's postings as task ids, newest first, read as they are taken: each Query reads what is asked
 * and one more, so that `more` is known without a Query that finds nothing.
 */
function termPostings(orgId: string, term: string) {
  const buffer: number[] = [];
  let startKey: Record<string, unknown> | undefined;
  let finished = false;
  const fill = async (count: number): Promise<void> => {
    while (buffer.length <= count && !finished) {
      const result = await table.query({
        ...termQuery(orgId, term),
        ProjectionExpression: 'task_id',
        Limit: count + 1 - buffer.length,
        ExclusiveStartKey: startKey,
      });
      buffer.push(...(result.Items ?? []).map((item) => Number(item.task_id)));
      startKey = result.LastEvaluatedKey;
      finished = startKey === undefined;
    }
  };
  return {
    /** Reads ahead so that at least `count` ids (and one more) are at hand, or all there are. */
    fill,
    /** The next `count` ids (fewer at the end). */
    async take(count: number): Promise<number[]> {
      await fill(count);
      return buffer.splice(0, count);
    },
    /** Whether ids remain to be taken. */
    get more(): boolean {
      return buffer.length > 0 || !finished;
    },
  };
}
