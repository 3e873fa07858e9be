import { getMany } from '#lib/db/batch';
import { itemIsNew } from '#lib/db/conditions';
import { counterKey, counterWrite, nextId } from '#lib/db/counters';
import { prefixEnd, tenantPk } from '#lib/db/keys';
import { type Bounded, queryUpTo } from '#lib/db/paging';
import { type QueryInput, table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import {
  type ContentItem,
  categoryCount,
  extensionCount,
  type FileFields,
  type FileItem,
  fileKeys,
  lookupKey,
  type PostingItem,
} from '#lib/files/file-keys';

/**
 * The access patterns of files (keys and item types: lib/files/file-keys.ts). The writes of a new file
 * are answered as items for the caller's transaction; the path guard is refused with reason
 * `path-taken`.
 */

export const nextFileId = (orgId: string): Promise<number> => nextId(counterKey(fileKeys.counter, tenantPk(orgId)));

/**
 * The writes of a new file: its record (with the words it is found by), its content (when it has one),
 * its copies under its path, category and extension, its word postings and its counts.
 */
export function newFileWrites(input: {
  orgId: string;
  file: FileFields;
  content: string | null;
  words: readonly string[];
}): TransactItem[] {
  const { orgId, file } = input;
  const categoryKey = file.category === null ? null : lookupKey(file.category);
  const extKey = file.ext === null ? null : lookupKey(file.ext);
  const copy = (key: { pk: string; sk: string }): TransactItem => ({ Put: { Item: { ...key, ...file } } });
  const writes: TransactItem[] = [
    {
      Put: {
        Item: { ...fileKeys.file(orgId, file.id), ...file, words: [...input.words] },
        ConditionExpression: itemIsNew,
      },
    },
    {
      Put: { Item: { ...fileKeys.byPath(orgId, file.path), ...file }, ConditionExpression: itemIsNew },
      reason: 'path-taken',
    },
  ];
  if (input.content !== null) {
    writes.push({ Put: { Item: { ...fileKeys.content(orgId, file.id), content: input.content } } });
  }
  if (categoryKey !== null) writes.push(copy(fileKeys.byCategory(orgId, categoryKey, file.id)));
  if (extKey !== null) writes.push(copy(fileKeys.byExtension(orgId, extKey, file.id)));
  for (const word of input.words) {
    const posting: PostingItem = {
      ...fileKeys.posting(orgId, word, file.id),
      file_id: file.id,
      path: file.path,
      category_key: categoryKey,
      ext: file.ext,
    };
    writes.push({ Put: { Item: posting } });
  }
  const add: Record<string, number> = { total: 1 };
  if (categoryKey !== null) add[categoryCount(categoryKey)] = 1;
  if (extKey !== null) add[extensionCount(extKey)] = 1;
  writes.push(counterWrite({ key: fileKeys.counts(orgId), add }));
  return writes;
}

/** A file's record and its content (null when it has none), read side by side. */
export async function getFileWithContent(
  orgId: string,
  id: number,
): Promise<{ file: FileItem; content: string | null } | undefined> {
  const [file, content] = await getMany<FileItem | ContentItem>(
    [fileKeys.file(orgId, id), fileKeys.content(orgId, id)],
    { consistent: true },
  );
  if (!file) return undefined;
  return { file: file as FileItem, content: (content as ContentItem | undefined)?.content ?? null };
}

/** The records of the files `ids`, in that order (absent ones left out). */
export async function filesByIds(orgId: string, ids: readonly number[]): Promise<FileItem[]> {
  const found = await getMany<FileItem>(ids.map((id) => fileKeys.file(orgId, id)));
  return found.filter((item): item is FileItem => item !== undefined);
}

/** The counts attribute `name` (`total`, `category:<key>`, `ext:<key>`), 0 before the first file. */
export async function fileCount(orgId: string, name: string): Promise<number> {
  const { Item } = await table.get({ Key: fileKeys.counts(orgId), ConsistentRead: true });
  return Number(Item?.[name] ?? 0);
}

const rangeQuery = (orgId: string, prefix: string): QueryInput => ({
  KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
  ExpressionAttributeValues: { ':pk': fileKeys.pk(orgId), ':prefix': prefix, ':end': prefixEnd(prefix) },
});

/** The first `max` items of a key range, newest (highest key) first. */
export async function newestInRange<T>(orgId: string, prefix: string, max: number): Promise<T[]> {
  const items: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  while (items.length < max) {
    const result = await table.query({
      ...rangeQuery(orgId, prefix),
      ScanIndexForward: false,
      Limit: max - items.length,
      ExclusiveStartKey: startKey,
    });
    items.push(...((result.Items ?? []) as T[]));
    startKey = result.LastEvaluatedKey;
    if (!startKey) break;
  }
  return items;
}

/** Every item of a key range. */
export async function wholeRange<T>(orgId: string, prefix: string): Promise<T[]> {
  const items: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({ ...rangeQuery(orgId, prefix), ExclusiveStartKey: startKey });
    items.push(...((result.Items ?? []) as T[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/**
 * The postings of the words that begin with `word`, at most `max` of them (`complete` is false when
 * there were more), with only what the search filters on.
 */
export const postingsOf = (orgId: string, word: string, max: number): Promise<Bounded<PostingItem>> =>
  queryUpTo<PostingItem>(
    {
      ...rangeQuery(orgId, fileKeys.wordPrefix(word)),
      ProjectionExpression: '#id, #path, #category, #ext',
      ExpressionAttributeNames: { '#id': 'file_id', '#path': 'path', '#category': 'category_key', '#ext': 'ext' },
    },
    max,
  );
