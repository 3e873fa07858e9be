import * as z from 'zod';
import { TASK_CREATION_PER_MINUTE } from '#lib/billing/catalogue';
import { defineRoute } from '#lib/http/route';
import { pagingQuery, valueList } from '#lib/http/schemas';
import { integerId } from '#lib/routes/schemas';
import { MAX_TASK_TERMS } from '#lib/tasks/search-index';
import { SEARCH_LIMITS } from '#lib/tasks/task-search';
import { TASK_PRIORITIES, TASK_STATUS_INPUTS, TASK_STATUSES, transitionTableMarkdown } from '#lib/tasks/task-status';

/**
 * Tasks, operational (`/tasks`) and public (`/v1/public/tasks`): the same records with the same ids,
 * served by the `tasks` function.
 */

const group = 'tasks';
const tags = ['Tasks'];
const publicTags = ['Public API'];
const params = z.object({ id: integerId('id') });

/** Task creation has its own per-minute limit per organization (design.md), on both APIs. */
const taskCreationLimit = { name: 'task_create', perMinute: TASK_CREATION_PER_MINUTE };

export const MAX_DEPENDENCIES = 20;
export const MAX_SEARCH_LENGTH = 200;

const TRANSITIONS =
  'Allowed status transitions (anything else answers 409 CONFLICT with the allowed next states in ' +
  `\`details[0].allowed\`; setting the current status again changes nothing):\n\n${transitionTableMarkdown()}`;

const title = z.string().trim().min(1).max(500);
const description = z.string().max(10_000).nullable();
const name = z.string().trim().min(1).max(100);
const shortText = (max: number) => z.string().trim().max(max).nullable();
const statusInput = z
  .enum(TASK_STATUS_INPUTS)
  .meta({ description: 'todo, in_progress, review, done, blocked or cancelled; `archived` means cancelled' });
const priority = z.enum(TASK_PRIORITIES).meta({ description: 'P0 (most urgent) to P3' });
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const dueDate = z
  .string()
  .refine(
    (value) => ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)),
    'an ISO 8601 date (2026-12-31) or date-time with zone (2026-12-31T17:00:00Z)',
  )
  .nullable();
const dependsOn = z
  .array(z.number().int().positive())
  .max(MAX_DEPENDENCIES)
  .refine((ids) => new Set(ids).size === ids.length, 'lists a task twice')
  .meta({
    description:
      `Ids of the tasks this one depends on (at most ${MAX_DEPENDENCIES}, same organization). A dependency on ` +
      'itself, on an unknown task, or one that closes a cycle is a 400.',
  });

const commonOptional = {
  description: description.optional(),
  priority: priority.optional(),
  category: shortText(100).optional(),
  tags: shortText(500).optional().meta({ description: 'Free text, e.g. comma-separated labels' }),
  type: shortText(100).optional(),
  estimated_minutes: z.number().int().min(0).max(1_000_000).nullable().optional(),
  due_date: dueDate.optional(),
  resolution: shortText(5000).optional(),
  max_duration_seconds: z.number().int().min(1).max(31_536_000).nullable().optional(),
  depends_on: dependsOn.optional(),
};

const namesAField = (body: Record<string, unknown>) => Object.values(body).some((value) => value !== undefined);

export const TaskRef = z
  .object({ id: z.number().int(), title: z.string(), status: z.enum(TASK_STATUSES) })
  .meta({ id: 'TaskRef' });

export const TaskRun = z
  .object({
    agent: z.string().meta({ description: 'The agent that ran the task' }),
    status: z.enum(['succeeded', 'failed']),
    attempt: z.number().int().meta({ description: 'Runs of this task so far, this one included' }),
    output: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The run’s answer; null when it failed' }),
    usage: z
      .object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() })
      .nullable()
      .meta({ description: 'Tokens the run used (consumed from the balance); null when it failed' }),
    model: z.string().nullable(),
    error: z.string().nullable().meta({ description: 'Why the run failed' }),
    started_at: z.string(),
    finished_at: z.string(),
  })
  .meta({ id: 'TaskRun' });

export const TaskRecord = z
  .object({
    id: z.number().int().meta({ description: 'Integer id, unique within the organization' }),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(TASK_STATUSES),
    priority: z.enum(TASK_PRIORITIES),
    assignee: z.string().nullable(),
    product: z.string().nullable().meta({ description: 'The product’s slug' }),
    product_id: z.number().int().nullable(),
    category: z.string().nullable(),
    tags: z.string().nullable(),
    type: z.string().nullable(),
    estimated_minutes: z.number().int().nullable(),
    due_date: z.string().nullable(),
    resolution: z.string().nullable(),
    max_duration_seconds: z.number().int().nullable(),
    depends_on: z.array(z.number().int()).meta({ description: 'Ids of the tasks this one depends on' }),
    completed_at: z.string().nullable().meta({ description: 'When the task last reached done' }),
    last_run: TaskRun.nullable().meta({ description: 'The last agent run on this task, null when none ran it' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Task' });

export const Blocking = z
  .object({
    blocked_by: z.array(TaskRef).meta({ description: 'The tasks this one depends on' }),
    blocks: z.array(TaskRef).meta({ description: 'The tasks that depend on this one' }),
    is_blocked: z.boolean().meta({ description: 'Whether any task in blocked_by is neither done nor cancelled' }),
  })
  .meta({ id: 'TaskBlocking' });

export const TaskWithBlocking = TaskRecord.extend({ blocking: Blocking }).meta({ id: 'TaskWithBlocking' });

export const PublicTaskRecord = TaskRecord.extend({
  assigned_to: z.string().nullable().meta({ description: 'The public API’s name for assignee' }),
}).meta({ id: 'PublicTask' });

export const PublicTaskWithBlocking = PublicTaskRecord.extend({ blocking: Blocking }).meta({
  id: 'PublicTaskWithBlocking',
});

/** `status=todo,in_progress`: each value one of the create/filter states; `archived` means cancelled. */
const statusList = valueList(TASK_STATUS_INPUTS, 'status').meta({
  description: 'Comma-separated states; `archived` selects cancelled tasks. An empty value filters nothing.',
});

const searchText = z
  .string()
  .max(MAX_SEARCH_LENGTH)
  .transform((value) => (value.trim() === '' ? undefined : value))
  .meta({
    description:
      `Full-text search over title and description, at most ${MAX_SEARCH_LENGTH} characters. Case- and ` +
      'accent-insensitive; every word of q must begin a word of the title or description (`deploy` finds ' +
      '“Deployment checklist”; words are runs of letters and digits). Results stay newest first. A blank q ' +
      'searches nothing (all tasks are listed); a q without any letter or digit is a 400. A task is found by ' +
      `the words of its title and description up to ${MAX_TASK_TERMS} word prefixes (all of any prose ` +
      'description); see the list’s description for `meta.total`.',
  });

/**
 * What `q` costs and what its `meta.total` is: reads follow the page asked for, not the number of matches,
 * so a total that would mean reading every match is an estimate, and says so.
 */
const [counted, inFull, examined] = [
  SEARCH_LIMITS.countedUpTo,
  SEARCH_LIMITS.examinedInFull,
  SEARCH_LIMITS.maxExamined,
  // Grouped by hand: toLocaleString loads ICU's number formatting at every cold start (9 ms) for three numbers.
].map((n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','));
const SEARCH_TOTAL =
  'With `q`, a page costs what it holds, not what matches: the newest matches are read up to the end of the ' +
  'page. `meta.total` is exact (and `meta.total_exact` absent) when every match was counted: one word, without ' +
  `other filters, matching at most ${counted} tasks; or several words or filters whose rarest word matches at ` +
  `most ${inFull} tasks, or whose matches were all seen on the way to the page. Otherwise \`meta.total_exact\` ` +
  'is `false` and `total` is an estimate, never below the matches seen: ' +
  `${counted} (or the end of the page) for one word matching more; for several words or filters, the share of ` +
  'matches among the tasks checked times the tasks the rarest word matches (counted up to ' +
  `${counted}). Counting exactly would read every match. Several words or filters are checked on the tasks of ` +
  `the rarest word, newest first, at most ${examined} a request: matches past those are not reached (narrow ` +
  'the query). A deep `offset` of a one-word search reads the word’s index up to it, not the tasks.';

export const listTasks = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/tasks',
  auth: 'bearer',
  summary: 'List tasks',
  description:
    'Newest first. Filters combine (AND). `next=true` answers the single highest-priority `todo` task for ' +
    '`assignee` (all assignees when absent): P0 before P3, then the oldest; tasks with a dependency that is ' +
    'neither done nor cancelled are passed over. It answers a list of zero or one task (`meta.limit` 1) and ' +
    `cannot be combined with \`status\` or \`q\` (400).\n\n${SEARCH_TOTAL}`,
  query: pagingQuery.extend({
    status: statusList.optional(),
    q: searchText.optional(),
    assignee: name
      .optional()
      .meta({ description: 'An assignee name (case-insensitive), or `me` for the caller’s username' }),
    priority: z
      .string()
      .max(20)
      .regex(/^P[0-3](,P[0-3])*$/, 'comma-separated P0..P3')
      .transform((value) => value.split(',') as Array<(typeof TASK_PRIORITIES)[number]>)
      .optional()
      .meta({ description: 'Comma-separated priorities (addition)' }),
    product: z.string().max(64).optional().meta({ description: 'A product slug (addition)' }),
    next: z
      .enum(['true', 'false'])
      .transform((value) => value === 'true')
      .optional(),
  }),
  envelope: 'list',
  listMeta: 'estimated',
  response: TaskRecord,
  errors: [503],
});

export const createTask = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/tasks',
  auth: 'bearer',
  summary: 'Create a task',
  description:
    '`title` is required. `product_slug` must name a product of the organization (400 otherwise). A task ' +
    'whose title (ignoring case and surrounding space) matches an open task (not done or cancelled) of the same ' +
    'product — or of no product — is a duplicate: 409 CONFLICT with `details[0].existing_id`. Creating a task ' +
    'writes an activity entry; creating it as done also writes a changelog entry and sends the ' +
    `\`task_completed\` event. Task creation is limited to ${TASK_CREATION_PER_MINUTE} a minute per organization ` +
    "(429 with Retry-After), on top of the tier's limits.",
  body: z.object({
    title,
    status: statusInput.optional().meta({ description: 'Default todo; archived means cancelled' }),
    assignee: name.nullable().optional(),
    product_slug: z.string().max(64).nullable().optional(),
    ...commonOptional,
  }),
  response: TaskRecord,
  status: 201,
  errors: [409],
  rateLimit: taskCreationLimit,
});

export const getTask = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/tasks/{id}',
  auth: 'bearer',
  summary: 'A task with its blocking information',
  description:
    '`blocking.blocked_by` lists the tasks this one depends on and `blocking.blocks` those that depend on it, ' +
    'each with id, title and status.',
  params,
  response: TaskWithBlocking,
  errors: [404],
});

export const updateTask = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/tasks/{id}',
  auth: 'bearer',
  summary: 'Update a task (addition: the operational update)',
  description:
    'Every field is optional; null clears. `product_slug` moves the task to another product (null: to none). ' +
    '`depends_on` replaces the list. Reaching `done` records `completed_at`, writes a changelog entry and ' +
    'sends the `task_completed` event, once per completion. Renaming or reopening a task into a title an open ' +
    `task of its product already has is a 409 duplicate.\n\n${TRANSITIONS}`,
  params,
  body: z
    .object({
      title: title.optional(),
      status: statusInput.optional(),
      assignee: name.nullable().optional(),
      product_slug: z.string().max(64).nullable().optional(),
      ...commonOptional,
    })
    .refine(namesAField, 'name at least one field to change'),
  response: TaskRecord,
  errors: [404, 409],
});

export const deleteTask = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/tasks/{id}',
  auth: 'bearer',
  summary: 'Delete a task permanently (organization admin)',
  description:
    'Organization admins and owners, instance admins and API keys with the `admin` scope may delete. Removes ' +
    'the task and its search entries, and takes it out of the `depends_on` of the tasks that depended on it. ' +
    'To keep the record, cancel it instead (PATCH status cancelled, or DELETE /v1/public/tasks/{id}).',
  params,
  envelope: 'deleted',
  response: z.object({ id: z.number().int() }),
  errors: [404],
});

/* The public API: the same records, with the public field names. */

const publicBody = {
  description: description.optional(),
  type: shortText(100).optional(),
  priority: priority.optional(),
  status: statusInput.optional(),
  assigned_to: name.nullable().optional(),
  product_id: z.number().int().positive().nullable().optional(),
  resolution: shortText(5000).optional(),
  max_duration_seconds: z.number().int().min(1).max(31_536_000).nullable().optional(),
  depends_on: dependsOn.optional(),
};

export const listPublicTasks = defineRoute({
  group,
  tags: publicTags,
  method: 'GET',
  path: '/v1/public/tasks',
  auth: 'bearer',
  summary: 'List tasks (public API)',
  description: `Newest first; filters combine (AND).\n\n${SEARCH_TOTAL}`,
  query: pagingQuery.extend({
    status: statusList.optional(),
    q: searchText.optional(),
    assigned_to: name.optional().meta({ description: 'An assignee (case-insensitive), or `me`' }),
    priority: priority.optional(),
    type: z.string().max(100).optional(),
    product_id: integerId('product_id').optional(),
  }),
  envelope: 'list',
  listMeta: 'estimated',
  response: PublicTaskRecord,
});

export const createPublicTask = defineRoute({
  group,
  tags: publicTags,
  method: 'POST',
  path: '/v1/public/tasks',
  auth: 'bearer',
  summary: 'Create a task (public API)',
  description:
    '`title` is required; `product_id` must name a product of the organization (400 otherwise). Duplicates, ' +
    `events and the creation limit (${TASK_CREATION_PER_MINUTE} a minute) are as for POST /tasks.`,
  body: z.object({ title, ...publicBody }),
  response: PublicTaskRecord,
  status: 201,
  errors: [409],
  rateLimit: taskCreationLimit,
});

export const getPublicTask = defineRoute({
  group,
  tags: publicTags,
  method: 'GET',
  path: '/v1/public/tasks/{id}',
  auth: 'bearer',
  summary: 'A task with its blocking information (public API)',
  params,
  response: PublicTaskWithBlocking,
  errors: [404],
});

export const updatePublicTask = defineRoute({
  group,
  tags: publicTags,
  method: 'PATCH',
  path: '/v1/public/tasks/{id}',
  auth: 'bearer',
  summary: 'Update a task (public API)',
  description: [
    'Every field is optional; null clears. `product_id` null takes the task out of its product.',
    TRANSITIONS,
  ].join('\n\n'),
  params,
  body: z.object({ title: title.optional(), ...publicBody }).refine(namesAField, 'name at least one field to change'),
  response: PublicTaskRecord,
  errors: [404, 409],
});

export const cancelPublicTask = defineRoute({
  group,
  tags: publicTags,
  method: 'DELETE',
  path: '/v1/public/tasks/{id}',
  auth: 'bearer',
  summary: 'Cancel a task (public API; the record stays)',
  description:
    'Sets the status to cancelled from any state; the task stays and can be listed with `status=cancelled` (or ' +
    '`archived`). Cancelling a cancelled task changes nothing. Answers ' +
    '`{ data: task, meta: { deleted: false, status: "cancelled" } }`.',
  params,
  envelope: 'deleted',
  response: PublicTaskRecord,
  errors: [404],
});
