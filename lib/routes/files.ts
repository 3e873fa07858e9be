import * as z from 'zod';
import { MAX_CONTENT_BYTES, MAX_FILE_WORDS } from '#lib/files/file-keys';
import { MAX_QUERY_WORDS } from '#lib/files/file-search';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { PATH_RULES, workspaceRelativePath } from '#lib/routes/path-schemas';
import { integerId } from '#lib/routes/schemas';

/** Files of the organization: the `files` function. */

const group = 'files';
const tags = ['Files'];

export const MAX_FILE_SEARCH_LENGTH = 200;

const params = z.object({ id: integerId('id') });

const PAGING =
  'Paged by `page` (from 1, default 1) and `limit` (default 50, at most 200; larger values are clamped); ' +
  '`meta` is `{ total, limit, offset, page }`, `offset` being `(page - 1) × limit`.';

/** `page` (1, 2, …) and `limit`, as GET /files takes them. */
const filePaging = pagingQuery.pick({ limit: true }).extend({
  page: z
    .string()
    .regex(/^\d{1,7}$/, 'page must be an integer from 1')
    .transform(Number)
    .refine((page) => page >= 1, 'page must be an integer from 1')
    .optional()
    .transform((page) => page ?? 1)
    .meta({ description: 'Page number, from 1; default 1' }),
});

const noControl = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters');

const category = noControl(64).meta({ description: 'Free text of at most 64 characters; filters ignore case' });
const categoryFilter = z
  .string()
  .trim()
  .max(64)
  .optional()
  .transform((value) => value || undefined)
  .meta({ description: 'Exactly this category, ignoring case; empty filters nothing' });

export const FileRecord = z
  .object({
    id: z.number().int().meta({ description: 'Integer id, unique within the organization' }),
    name: z.string(),
    path: z.string().meta({ description: 'Workspace-relative; unique within the organization' }),
    file_type: z.string().nullable(),
    category: z.string().nullable(),
    ext: z.string().nullable().meta({ description: 'The path’s extension, lowercase, without its dot' }),
    size_bytes: z.number().int().meta({ description: 'The content’s size as UTF-8' }),
    created_at: z.string(),
  })
  .meta({ id: 'File' });

export const FileWithContentRecord = FileRecord.extend({
  content: z.string().nullable().meta({ description: 'The text as stored; null when created without one' }),
}).meta({ id: 'FileWithContent' });

export const listFiles = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/files',
  auth: 'bearer',
  summary: 'List the organization’s files',
  description: `Newest first, without their content. \`category\`: that category only, ignoring case. ${PAGING}`,
  query: filePaging.extend({ category: categoryFilter }),
  envelope: 'list',
  response: FileRecord,
});

export const createFile = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/files',
  auth: 'bearer',
  summary: 'Store a file',
  description:
    '`name` and `path` are required. A file is text (UTF-8), written once: there is no update or delete, and ' +
    `a path that holds a file is 409. \`content\` is at most ${MAX_CONTENT_BYTES} bytes (256 KiB) as UTF-8: ` +
    'larger content is 413 PAYLOAD_TOO_LARGE with `details` naming `body.content`, and any request body over ' +
    '1 MiB is 413 before it is read. `ext` is taken from the path. Answers the record without its content; ' +
    `recorded in the activity log (\`file.created\`).\n\n\`path\`: ${PATH_RULES}`,
  body: z.object({
    name: noControl(255),
    path: workspaceRelativePath,
    file_type: noControl(64)
      .nullable()
      .optional()
      .meta({ description: 'What the text is (`markdown`, `text/csv`…), as given' }),
    category: category.nullable().optional(),
    content: z
      .string()
      .nullable()
      .optional()
      .meta({ description: `Text, at most ${MAX_CONTENT_BYTES} bytes` }),
  }),
  response: FileRecord,
  status: 201,
  errors: [409, 413],
});

export const searchFiles = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/files/search',
  auth: 'bearer',
  summary: 'Search the organization’s files',
  description:
    'Newest first, without their content; filters combine (AND), empty values filter nothing. `q`: every word ' +
    'of it begins a word the file is found by (ignoring case and accents): the words of its name, path, type ' +
    `and category, then of its content, its first ${MAX_FILE_WORDS} distinct words in all; at most ` +
    `${MAX_QUERY_WORDS} distinct words and ${MAX_FILE_SEARCH_LENGTH} characters. \`workspace\`: a ` +
    'workspace-relative directory; the files under it, at any depth. `category`: exactly, ignoring case. ' +
    '`ext`: the extension, with or without its dot, ignoring case. Each filter is answered from an index of ' +
    `its own (word postings, path, category and extension keys), never by reading every file. ${PAGING} ` +
    '`meta.complete` is false only when every word of `q` is so common (over 1,000 postings each) that ' +
    'files may have been missed; narrow the query then.',
  query: filePaging.extend({
    q: z
      .string()
      .max(MAX_FILE_SEARCH_LENGTH)
      .optional()
      .transform((value) => (value?.trim() ? value : undefined))
      .meta({ description: `Words, at most ${MAX_QUERY_WORDS}` }),
    workspace: z
      .string()
      .optional()
      .transform((value) => value || undefined)
      .pipe(workspaceRelativePath.optional())
      .meta({ description: 'A workspace-relative directory, e.g. `agents/dev`' }),
    category: categoryFilter,
    ext: z
      .string()
      .trim()
      .max(33)
      .regex(/^\.?[^\p{Cc}./]*$/u, 'an extension such as md or .md')
      .optional()
      .transform((value) => value?.replace(/^\./, '').toLowerCase() || undefined)
      .meta({ description: 'An extension such as `md` or `.md`' }),
  }),
  envelope: 'list',
  response: FileRecord,
});

export const getFile = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/files/{id}',
  auth: 'bearer',
  summary: 'One file with its content',
  description: 'A file of another organization answers 404.',
  params,
  response: FileWithContentRecord,
  errors: [404],
});
