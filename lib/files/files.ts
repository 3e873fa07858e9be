import { activityActor, activityWrites } from '#lib/activity/activity-log';
import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError, PayloadTooLargeError } from '#lib/errors';
import {
  categoryCount,
  type FileFields,
  type FileItem,
  type FileRecord,
  fileKeys,
  lookupKey,
  MAX_CONTENT_BYTES,
  MAX_FILE_WORDS,
  toFileRecord,
} from '#lib/files/file-keys';
import { extensionOf } from '#lib/files/file-paths';
import { fileCount, getFileWithContent, newestInRange, newFileWrites, nextFileId } from '#lib/files/file-records';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { words } from '#lib/tasks/search-index';

/**
 * Files of the organization: POST /files, GET /files and GET /files/{id} (search: lib/files/file-search.ts).
 * A file is text (UTF-8) at a workspace-relative path, unique in the organization, written once with its
 * lookup copies, word postings, counts and activity entry in one transaction.
 */

export const fileNotFound = () => new NotFoundError('File not found');

export interface NewFile {
  name: string;
  path: string;
  file_type?: string | null | undefined;
  category?: string | null | undefined;
  content?: string | null | undefined;
}

export type FileWithContent = FileRecord & { content: string | null };

/**
 * The distinct words a file is found by: those of its name, path, type and category, then of its
 * content, at most `MAX_FILE_WORDS`.
 */
export function fileWords(file: Pick<FileFields, 'name' | 'path' | 'file_type' | 'category'>, content: string | null) {
  const found = new Set<string>();
  for (const text of [file.name, file.path, file.file_type, file.category, content]) {
    for (const word of words(text ?? '')) {
      if (found.size >= MAX_FILE_WORDS) return [...found];
      found.add(word);
    }
  }
  return [...found];
}

const pathTaken = () => new ConflictError('A file with this path exists', [{ path: 'path', message: 'is taken' }]);

/**
 * POST /files: 413 when the content is over `MAX_CONTENT_BYTES`, 409 when the path holds a file. Answers the
 * record without its content (the caller has it; GET /files/{id} gives it back).
 */
export async function createFile(ctx: RequestContext, input: NewFile): Promise<FileRecord> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const content = input.content ?? null;
  const size = content === null ? 0 : Buffer.byteLength(content);
  if (size > MAX_CONTENT_BYTES) throw new PayloadTooLargeError(MAX_CONTENT_BYTES, 'content');

  const id = await nextFileId(orgId);
  const now = ctx.ports.clock.now();
  const actor = activityActor(principal);
  const file: FileFields = {
    id,
    name: input.name,
    path: input.path,
    file_type: input.file_type ?? null,
    category: input.category ?? null,
    ext: extensionOf(input.path),
    size_bytes: size,
    created_at: now.toISOString(),
    created_by: actor.actor_id,
  };
  await transact(
    [
      ...newFileWrites({ orgId, file, content, words: fileWords(file, content) }),
      ...activityWrites(
        orgId,
        {
          ...actor,
          action: 'file.created',
          entity_type: 'file',
          entity_id: String(id),
          metadata: { path: file.path, size_bytes: size },
        },
        now,
      ),
    ],
    { 'path-taken': pathTaken },
  );
  return toFileRecord(file);
}

/** GET /files/{id}: the file with its content. */
export async function getFile(ctx: RequestContext, id: number): Promise<FileWithContent> {
  const { orgId } = requirePrincipal(ctx);
  const found = await getFileWithContent(orgId, id);
  if (!found) throw fileNotFound();
  return { ...toFileRecord(found.file), content: found.content };
}

/**
 * A newest-first page of a key range whose total is kept in the counts: the total and the items up to
 * the page's end, read side by side.
 */
export async function countedPage(
  orgId: string,
  range: { prefix: string; count: string },
  page: PageRequest,
): Promise<Page<FileRecord>> {
  const [total, items] = await Promise.all([
    fileCount(orgId, range.count),
    newestInRange<FileItem>(orgId, range.prefix, page.offset + page.limit),
  ]);
  return { items: items.slice(page.offset).map(toFileRecord), total };
}

/** GET /files, newest first: every file, or the files of one category (ignoring case). */
export async function listFiles(
  ctx: RequestContext,
  filter: { category?: string | undefined },
  page: PageRequest,
): Promise<Page<FileRecord>> {
  const { orgId } = requirePrincipal(ctx);
  if (filter.category === undefined) return countedPage(orgId, { prefix: fileKeys.filePrefix, count: 'total' }, page);
  const key = lookupKey(filter.category);
  return countedPage(orgId, { prefix: fileKeys.categoryPrefix(key), count: categoryCount(key) }, page);
}
