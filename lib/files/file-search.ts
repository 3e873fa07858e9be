import type { Page, PageRequest } from '#lib/db/paging';
import { ValidationError } from '#lib/errors';
import {
  extensionCount,
  type FileItem,
  type FileRecord,
  fileKeys,
  lookupKey,
  toFileRecord,
} from '#lib/files/file-keys';
import { filesByIds, postingsOf, wholeRange } from '#lib/files/file-records';
import { countedPage, listFiles } from '#lib/files/files';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { words } from '#lib/tasks/search-index';

/**
 * GET /files/search: files by words, workspace, category and extension, newest first, read through the
 * files' keys (lib/files/file-keys.ts), never by reading every file. The most selective key given leads:
 *
 * 1. `q`: each query word's postings, one Query of its prefix (a word matches the words it begins),
 *    read side by side, at most `POSTINGS_READ` each; the postings carry path, category and extension,
 *    so the other filters apply to them. A word whose postings were all read gives the complete set of
 *    files that hold it; those sets are intersected, and when another word had more postings than were
 *    read, each candidate is checked against the words its record keeps (BatchGetItem, at most
 *    `POSTINGS_READ` records). When every word had more, the files met in every read are answered and
 *    the answer says it may be incomplete (`complete: false`): a query of only very common words.
 * 2. `workspace`: the path copies under `<workspace>/`, one Query; category and extension filter them.
 * 3. `category`: the category's copies (newest first, the total from the counts; with `ext`, all of
 *    them, filtered).
 * 4. `ext`: the extension's copies, newest first, the total from the counts.
 *
 * Reads grow with the files each key selects (a workspace's files, a category's), and for words are
 * bounded by `POSTINGS_READ`, never with the organization's files. Totals are exact but for a query
 * whose every word is that common.
 */

/** A query holds at most this many distinct words: one Query each. */
export const MAX_QUERY_WORDS = 8;
/** One word's postings read at most. */
export const POSTINGS_READ = 1000;

/** A page of a search; `complete` is false when a query of common words may have missed files. */
export type SearchPage = Page<FileRecord> & { complete: boolean };

export interface FileSearch {
  q?: string | undefined;
  /** A workspace-relative directory: the files whose path begins with `<workspace>/`. */
  workspace?: string | undefined;
  category?: string | undefined;
  /** Lowercase, without its dot. */
  ext?: string | undefined;
}

/** The distinct words of `q`, or a 400 when it has none or too many. */
export function queryWords(q: string): string[] {
  const found = [...new Set(words(q))];
  if (found.length === 0) {
    throw new ValidationError('q has no words to search for', [
      { path: 'q', message: 'has no words to search for (words are letters and digits)' },
    ]);
  }
  if (found.length > MAX_QUERY_WORDS) {
    throw new ValidationError(`q has more than ${MAX_QUERY_WORDS} words`, [
      { path: 'q', message: `has more than ${MAX_QUERY_WORDS} distinct words` },
    ]);
  }
  return found;
}

interface Located {
  path: string;
  category_key: string | null;
  ext: string | null;
}

function keeps(search: FileSearch) {
  const under = search.workspace === undefined ? undefined : `${search.workspace}/`;
  const categoryKey = search.category === undefined ? undefined : lookupKey(search.category);
  return (item: Located): boolean =>
    (under === undefined || item.path.startsWith(under)) &&
    (categoryKey === undefined || item.category_key === categoryKey) &&
    (search.ext === undefined || item.ext === search.ext);
}

const newestFirst = (a: number, b: number) => b - a;

export async function searchFiles(ctx: RequestContext, search: FileSearch, page: PageRequest): Promise<SearchPage> {
  const { orgId } = requirePrincipal(ctx);
  if (search.q !== undefined) return byWords(orgId, queryWords(search.q), search, page);
  return { ...(await byKeys(ctx, orgId, search, page)), complete: true };
}

async function byKeys(
  ctx: RequestContext,
  orgId: string,
  search: FileSearch,
  page: PageRequest,
): Promise<Page<FileRecord>> {
  if (search.workspace !== undefined) {
    const copies = await wholeRange<FileItem>(orgId, fileKeys.workspacePrefix(search.workspace));
    return windowOf(copies, search, page);
  }
  if (search.category !== undefined) {
    if (search.ext === undefined) return listFiles(ctx, { category: search.category }, page);
    const copies = await wholeRange<FileItem>(orgId, fileKeys.categoryPrefix(lookupKey(search.category)));
    return windowOf(copies, search, page);
  }
  if (search.ext !== undefined) {
    const key = lookupKey(search.ext);
    return countedPage(orgId, { prefix: fileKeys.extensionPrefix(key), count: extensionCount(key) }, page);
  }
  return listFiles(ctx, {}, page);
}

/** Copies of file records, filtered, newest first, one page of them. */
function windowOf(copies: FileItem[], search: FileSearch, page: PageRequest): Page<FileRecord> {
  const keep = keeps(search);
  const found = copies
    .filter((copy) =>
      keep({ path: copy.path, category_key: copy.category === null ? null : lookupKey(copy.category), ext: copy.ext }),
    )
    .sort((a, b) => newestFirst(a.id, b.id));
  return { items: found.slice(page.offset, page.offset + page.limit).map(toFileRecord), total: found.length };
}

/** Whether one of the file's words begins with `wanted` (as a posting prefix read would find it). */
const holdsWord = (item: FileItem, wanted: string) => (item.words ?? []).some((word) => word.startsWith(wanted));

async function byWords(orgId: string, wanted: string[], search: FileSearch, page: PageRequest): Promise<SearchPage> {
  const keep = keeps(search);
  const reads = await Promise.all(
    wanted.map(async (word) => {
      const { items, complete } = await postingsOf(orgId, word, POSTINGS_READ);
      return { word, complete, found: new Map(items.filter(keep).map((posting) => [posting.file_id, posting])) };
    }),
  );
  const bySize = (a: { found: Map<number, unknown> }, b: { found: Map<number, unknown> }) =>
    a.found.size - b.found.size;
  const whole = reads.filter((read) => read.complete).sort(bySize);
  const [leading, ...others] = whole.length > 0 ? whole : [...reads].sort(bySize);
  const candidates = [...(leading?.found.keys() ?? [])]
    .filter((id) => others.every((read) => read.found.has(id)))
    .sort(newestFirst);
  const unsure = whole.length > 0 ? reads.filter((read) => !read.complete).map((read) => read.word) : [];
  if (unsure.length === 0) {
    const files = await filesByIds(orgId, candidates.slice(page.offset, page.offset + page.limit));
    return { items: files.map(toFileRecord), total: candidates.length, complete: whole.length > 0 };
  }
  // A word with more postings than were read: each candidate is checked against the words it keeps.
  const matching = (await filesByIds(orgId, candidates)).filter((item) =>
    unsure.every((word) => holdsWord(item, word)),
  );
  return {
    items: matching.slice(page.offset, page.offset + page.limit).map(toFileRecord),
    total: matching.length,
    complete: true,
  };
}
