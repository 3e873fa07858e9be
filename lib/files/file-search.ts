import type { Page, PageRequest } from '#lib/db/paging';
import { ValidationError } from '#lib/errors';
import {
  extensionCount,
  type FileItem,
  type FileRecord,
  fileKeys,
  lookupKey,
  type PostingItem,
  toFileRecord,
} from '#lib/files/file-keys';
import { filesByIds, wholeRange } from '#lib/files/file-records';
import { countedPage, listFiles } from '#lib/files/files';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { words } from '#lib/tasks/search-index';

/**
 * GET /files/search: files by words, workspace, category and extension, newest first, read through the
 * files' keys (lib/files/file-keys.ts), never by reading every file. The most selective key given leads:
 *
 * 1. `q`: each query word's postings, one Query of its prefix (a word matches the words it begins),
 *    read side by side and intersected; the postings carry path, category and extension, so the other
 *    filters apply to them. One BatchGetItem then reads the page's files.
 * 2. `workspace`: the path copies under `<workspace>/`, one Query; category and extension filter them.
 * 3. `category`: the category's copies (newest first, the total from the counts; with `ext`, all of
 *    them, filtered).
 * 4. `ext`: the extension's copies, newest first, the total from the counts.
 *
 * Reads grow with the files each key selects (the postings of the query's words, a workspace's files),
 * not with the organization's. Totals are exact.
 */

/** A query holds at most this many distinct words: one Query each. */
export const MAX_QUERY_WORDS = 8;

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

export async function searchFiles(
  ctx: RequestContext,
  search: FileSearch,
  page: PageRequest,
): Promise<Page<FileRecord>> {
  const { orgId } = requirePrincipal(ctx);
  if (search.q !== undefined) return byWords(orgId, queryWords(search.q), search, page);
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

async function byWords(
  orgId: string,
  wanted: string[],
  search: FileSearch,
  page: PageRequest,
): Promise<Page<FileRecord>> {
  const keep = keeps(search);
  const perWord = await Promise.all(
    wanted.map(async (word) => {
      const postings = await wholeRange<PostingItem>(orgId, fileKeys.wordPrefix(word), [
        'file_id',
        'path',
        'category_key',
        'ext',
      ]);
      return new Map(postings.filter(keep).map((posting) => [posting.file_id, posting]));
    }),
  );
  const [smallest, ...others] = perWord.sort((a, b) => a.size - b.size);
  const ids = [...(smallest?.keys() ?? [])].filter((id) => others.every((found) => found.has(id))).sort(newestFirst);
  const files = await filesByIds(orgId, ids.slice(page.offset, page.offset + page.limit));
  return { items: files.map(toFileRecord), total: ids.length };
}
