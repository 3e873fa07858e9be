import { getMany } from '#lib/db/batch';
import { prefixEnd, type TableKey, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { SearchField } from '#lib/search/search-fields';
import { words } from '#lib/tasks/search-index';

/**
 * The read side of a search over one kind of record of lib/search/search-postings.ts (tasks have an
 * index of their own, read a page at a time: lib/tasks/task-search.ts): a fixed number of calls,
 * whatever the size of the organization.
 *
 * 1. The postings of the query's longest words (`MAX_DRIVING_WORDS`; longer words are rarer), one Query
 *    each, side by side, newest first, at most `POSTINGS_READ` each.
 * 2. A word whose postings were all read gives the complete set of records that may match; those sets
 *    are intersected. When every word has more postings than were read, the records met in every read
 *    are the candidates, and the answer says it may have missed some (`more`).
 * 3. One BatchGetItem reads the first candidates (those met by every word first), at most `fetch`; each
 *    is checked against its own text for every word of the query, so a stale posting or a word that was
 *    not among the driving ones never gives a wrong result.
 */

/** One Query per driving word reads at most this many postings. */
export const POSTINGS_READ = 500;
/** The query's words whose postings are read; the others are checked against each candidate's text. */
export const MAX_DRIVING_WORDS = 4;

export interface KindSource<T> {
  /** The sort-key prefix of the postings of words beginning with `word`. */
  prefix(word: string): string;
  /** The posting attribute naming the record. */
  refAttribute: string;
  key(ref: string): TableKey;
  /** The fields the record is found by, its title's first. */
  fields(item: T): readonly SearchField[];
  /** Whether the record may be shown at all (archived templates are not). */
  visible?(item: T): boolean;
}

export interface Found<T> {
  /** The records that hold every word, in candidate order. */
  items: T[];
  /** Whether there may be more matches than `items`. */
  more: boolean;
}

/** Whether every query word begins some word of the fields. */
export function matchesAll(queryWords: readonly string[], fields: readonly SearchField[]): boolean {
  const own = fields.flatMap(([, text]) => words(text ?? ''));
  return queryWords.every((wanted) => own.some((word) => word.startsWith(wanted)));
}

export async function findRecords<T>(
  orgId: string,
  source: KindSource<T>,
  queryWords: readonly string[],
  fetch: number,
): Promise<Found<T>> {
  const driving = [...queryWords].sort((a, b) => b.length - a.length).slice(0, MAX_DRIVING_WORDS);
  const reads = await Promise.all(driving.map((word) => readPostings(orgId, source, word)));
  const complete = reads.filter((read) => read.complete);
  const deciding = complete.length > 0 ? complete : reads;
  const [smallest, ...others] = [...deciding].sort((a, b) => a.refs.size - b.refs.size);
  const metByAll = (ref: string) => reads.every((read) => read.refs.has(ref));
  const candidates = [...(smallest?.refs ?? [])]
    .filter((ref) => others.every((read) => read.refs.has(ref)))
    .sort((a, b) => Number(metByAll(b)) - Number(metByAll(a)));

  const window = candidates.slice(0, fetch);
  const items = window.length > 0 ? await getMany<T>(window.map((ref) => source.key(ref))) : [];
  const matching = items.filter(
    (item): item is T =>
      item !== undefined && (source.visible?.(item) ?? true) && matchesAll(queryWords, source.fields(item)),
  );
  return { items: matching, more: complete.length === 0 || candidates.length > window.length };
}

interface PostingRead {
  refs: Set<string>;
  complete: boolean;
}

/** One page of a word's postings, newest first (refs are padded ids or slugs, in key order). */
async function readPostings<T>(orgId: string, source: KindSource<T>, word: string): Promise<PostingRead> {
  const prefix = source.prefix(word);
  const result = await table.query({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix, ':end': prefixEnd(prefix) },
    ExpressionAttributeNames: { '#ref': source.refAttribute },
    ProjectionExpression: '#ref',
    ScanIndexForward: false,
    Limit: POSTINGS_READ,
  });
  const refs = new Set((result.Items ?? []).map((item) => String(item[source.refAttribute])));
  return { refs, complete: result.LastEvaluatedKey === undefined };
}

/** Characters a snippet shows. */
const SNIPPET_LENGTH = 160;
/** Characters of context a snippet keeps before the first match. */
const SNIPPET_LEAD = 40;

/**
 * The field a result is shown by: the first of its fields (the title first) holding a word that a query
 * word begins, with a snippet of that field around the match, white space folded, `…` where cut.
 */
export function matchingField(
  queryWords: readonly string[],
  fields: readonly SearchField[],
): { field: string; snippet: string } {
  for (const [field, text] of fields) {
    const chars = Array.from(text ?? '');
    const at = firstMatch(chars, queryWords);
    if (at !== undefined) return { field, snippet: snippet(chars, at) };
  }
  const [field, text] = fields[0] ?? ['', ''];
  return { field, snippet: snippet(Array.from(text ?? ''), 0) };
}

/** Where (in code points) the first word of `text` that a query word begins starts, folded as `words` folds. */
function firstMatch(chars: readonly string[], queryWords: readonly string[]): number | undefined {
  let folded = '';
  const origin: number[] = [];
  for (const [index, char] of chars.entries()) {
    const piece = char
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase();
    folded += piece;
    for (let n = 0; n < piece.length; n += 1) origin.push(index);
  }
  for (const match of folded.matchAll(/[\p{L}\p{N}]+/gu)) {
    if (queryWords.some((wanted) => match[0].startsWith(wanted))) return origin[match.index] ?? 0;
  }
  return undefined;
}

function snippet(chars: readonly string[], at: number): string {
  const start = at <= SNIPPET_LEAD ? 0 : at - SNIPPET_LEAD;
  const end = Math.min(chars.length, start + SNIPPET_LENGTH);
  const cut = chars.slice(start, end).join('').replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${cut}${end < chars.length ? '…' : ''}`;
}
