import { pad, type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where files live in the table (writes: lib/files/file-records.ts; reads: lib/files/file-queries.ts).
 * Files grow with use, so they have a partition of their own, beside none of the records a request
 * path of another area queries. A file is written once (the API has no update or delete), so the
 * copies of its record under each of its lookup keys never go stale: a list reads the copies of the
 * key it filters on and nothing else.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | file | `T#<org>#FILES` | `FILE#<id>` | the record without its content; `words` it is found by |
 * | content | `T#<org>#FILES` | `CONTENT#<id>` | `content`, at most `MAX_CONTENT_BYTES` |
 * | by path | `T#<org>#FILES` | `PATH#<path>` | a copy; the path's guard; a workspace is a prefix |
 * | by category | `T#<org>#FILES` | `CAT#<category key>#<id>` | a copy, when the file has a category |
 * | by extension | `T#<org>#FILES` | `EXT#<ext key>#<id>` | a copy, when the path has an extension |
 * | word posting | `T#<org>#FILES` | `WORD#<word>#<id>` | `file_id`, `path`, `category_key`, `ext` |
 * | counts | `T#<org>#FILES` | `COUNTS` | `total`, `category:<key>`, `ext:<key>`: the lists' totals |
 * | file count | `T#<org>` | `COUNTER#files` | the sequence of file ids |
 *
 * Category keys are the category in lowercase, percent-encoded (`#` and `/` cannot end a key early);
 * extension keys likewise. A search word is looked up as a prefix of the posting keys, so `deplo` finds
 * `deploy` and `deployment` in one Query (the words of lib/tasks/search-index.ts).
 */
export const fileKeys = {
  pk: (orgId: string): string => `${tenantPk(orgId)}#FILES`,
  file: (orgId: string, id: number): TableKey => ({ pk: fileKeys.pk(orgId), sk: `FILE#${pad(id)}` }),
  filePrefix: 'FILE#',
  content: (orgId: string, id: number): TableKey => ({ pk: fileKeys.pk(orgId), sk: `CONTENT#${pad(id)}` }),
  byPath: (orgId: string, path: string): TableKey => ({ pk: fileKeys.pk(orgId), sk: `PATH#${path}` }),
  /** Every file under a workspace (a directory): the path keys that begin with `<workspace>/`. */
  workspacePrefix: (workspace: string): string => `PATH#${workspace}/`,
  byCategory: (orgId: string, categoryKey: string, id: number): TableKey => ({
    pk: fileKeys.pk(orgId),
    sk: `CAT#${categoryKey}#${pad(id)}`,
  }),
  categoryPrefix: (categoryKey: string): string => `CAT#${categoryKey}#`,
  byExtension: (orgId: string, extKey: string, id: number): TableKey => ({
    pk: fileKeys.pk(orgId),
    sk: `EXT#${extKey}#${pad(id)}`,
  }),
  extensionPrefix: (extKey: string): string => `EXT#${extKey}#`,
  posting: (orgId: string, word: string, id: number): TableKey => ({
    pk: fileKeys.pk(orgId),
    sk: `WORD#${word}#${pad(id)}`,
  }),
  /** The postings of every word that begins with `word`. */
  wordPrefix: (word: string): string => `WORD#${word}`,
  counts: (orgId: string): TableKey => ({ pk: fileKeys.pk(orgId), sk: 'COUNTS' }),
  counter: 'files',
};

/** The key form of a category or an extension: lowercase, percent-encoded. */
export const lookupKey = (value: string): string => encodeURIComponent(value.toLowerCase());

/** The counts' attribute of a category (`category:<key>`) or an extension (`ext:<key>`). */
export const categoryCount = (categoryKey: string): string => `category:${categoryKey}`;
export const extensionCount = (extKey: string): string => `ext:${extKey}`;

/**
 * The largest content a file holds: 256 KiB as UTF-8. The content is one item of its own, and DynamoDB
 * holds at most 400 KB in an item; the request body (JSON, its escapes included) is capped at 1 MiB
 * before this is checked.
 */
export const MAX_CONTENT_BYTES = 256 * 1024;

/**
 * A file is found by the words of its name, path, type and category, then of its content, at most
 * this many distinct words: its postings are written in its creation's transaction (at most 100 writes,
 * ten of which are the file's other records), so the index is never a posting short or over. A long
 * content is found by its first words only.
 */
export const MAX_FILE_WORDS = 80;

/** The record of a file, as stored (without its content) and copied under each lookup key. */
export interface FileFields {
  id: number;
  name: string;
  path: string;
  file_type: string | null;
  category: string | null;
  ext: string | null;
  size_bytes: number;
  created_at: string;
  created_by: string;
}

/** The stored record; only the record itself (not its copies) keeps `words`, which the search checks candidates by. */
export type FileItem = TableKey & FileFields & { words?: string[] };

export interface ContentItem extends TableKey {
  content: string;
}

export interface PostingItem extends TableKey {
  file_id: number;
  path: string;
  category_key: string | null;
  ext: string | null;
}

/** A file as lists show it; GET /files/{id} adds `content`. */
export type FileRecord = Omit<FileFields, 'created_by'>;

export const toFileRecord = (item: FileFields): FileRecord => ({
  id: item.id,
  name: item.name,
  path: item.path,
  file_type: item.file_type ?? null,
  category: item.category ?? null,
  ext: item.ext ?? null,
  size_bytes: item.size_bytes,
  created_at: item.created_at,
});
