import { type TableKey, tenantPk } from '#lib/db/keys';
import { type Bounded, countUpTo, type Page, type PageRequest, queryPage, queryUpTo } from '#lib/db/paging';
import { type QueryInput, table } from '#lib/db/table';
import { NotFoundError, ValidationError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import { type Blocking, blockingOf, hasOpenDependency } from '#lib/tasks/dependencies';
import { matchesSearch, words } from '#lib/tasks/search-index';
import { assigneeKey, type Task, type TaskItem, taskKeys, toTask } from '#lib/tasks/task-keys';
import { getTaskItem } from '#lib/tasks/task-records';
import { searchTasks } from '#lib/tasks/task-search';
import type { TaskPriority, TaskStatus } from '#lib/tasks/task-status';

/**
 * The read side of tasks: one task with its blocking, lists with filters, full-text search and `next`.
 * Each list reads only what its filters select, by the cheapest route:
 *
 * - `q`: the search index, a page at a time (lib/tasks/task-search.ts: reads follow the page, and the
 *   total may be an estimate, `totalExact` false);
 * - `assignee`: the assignee index, all of the assignee's tasks or one Query per status asked for;
 * - `status`: one Query of the status index per status asked for;
 * - otherwise the task collection itself, newest first.
 *
 * Without `q`, totals are exact, so a list reads every task that passes its key-level selection; the
 * remaining filters (assignee, priority, product, type) are applied to those.
 */
export interface TaskFilter {
  statuses?: TaskStatus[];
  q?: string;
  /** A name, already resolved from `me`. */
  assignee?: string;
  priorities?: TaskPriority[];
  productSlug?: string;
  productId?: number;
  type?: string;
}

const newestFirst = (a: TaskItem, b: TaskItem) => b.id - a.id;

function keeps(filter: TaskFilter, queryWords: string[] | undefined) {
  const assignee = filter.assignee === undefined ? undefined : assigneeKey(filter.assignee);
  const type = filter.type?.toLowerCase();
  return (item: TaskItem): boolean =>
    (filter.statuses === undefined || filter.statuses.includes(item.status)) &&
    (assignee === undefined || assigneeKey(item.assignee ?? null) === assignee) &&
    (filter.priorities === undefined || filter.priorities.includes(item.priority)) &&
    (filter.productSlug === undefined || item.product_slug === filter.productSlug) &&
    (filter.productId === undefined || item.product_id === filter.productId) &&
    (type === undefined || (item.type ?? '').toLowerCase() === type) &&
    (queryWords === undefined || matchesSearch(queryWords, item));
}

/** The words of `q`, or a 400 when it has none (only punctuation, say). */
export function searchWords(q: string, path = 'q'): string[] {
  const found = [...new Set(words(q))];
  if (found.length === 0) {
    const message = 'q has no words to search for (words are letters and digits)';
    throw new ValidationError(message, [{ path, message }]);
  }
  return found;
}

/** A page of a list; `totalExact` false when `total` is an estimate (a search, lib/tasks/task-search.ts). */
export type ListPage = Page<TaskItem> & { totalExact?: false };

export async function listTaskItems(orgId: string, filter: TaskFilter, page: PageRequest): Promise<ListPage> {
  const queryWords = filter.q === undefined ? undefined : searchWords(filter.q);
  const keep = keeps(filter, queryWords);
  if (queryWords) {
    const { q: _, ...others } = filter;
    const filtered = Object.values(others).some((value) => value !== undefined);
    const found = await searchTasks(orgId, { queryWords, matches: keep, filtered }, page);
    return { items: found.items, total: found.total, ...(found.exact ? {} : { totalExact: false as const }) };
  }
  if (filter.assignee !== undefined) {
    return window((await byAssignee(orgId, filter.assignee, filter.statuses)).filter(keep), page);
  }
  if (filter.statuses) {
    const perStatus = await Promise.all([...new Set(filter.statuses)].map((status) => byStatus(orgId, status)));
    return window(perStatus.flat().filter(keep), page);
  }
  const unfiltered = Object.values(filter).every((value) => value === undefined);
  if (unfiltered) return newestTasks(orgId, page);
  return queryPage<TaskItem>(newestFirstQuery(orgId), page, keep);
}

/** The task collection itself, newest first. */
const newestFirstQuery = (orgId: string): QueryInput => ({
  KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
  ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': taskKeys.prefix },
  ScanIndexForward: false,
});

/**
 * The unfiltered list: the total from the organization's task count, and only the tasks up to the end
 * of the page from the collection, newest first.
 */
async function newestTasks(orgId: string, page: PageRequest): Promise<Page<TaskItem>> {
  const wanted = page.offset + page.limit;
  const items: TaskItem[] = [];
  const reading = async () => {
    let startKey: Record<string, unknown> | undefined;
    while (items.length < wanted) {
      const result = await table.query({
        ...newestFirstQuery(orgId),
        Limit: wanted - items.length,
        ExclusiveStartKey: startKey,
      });
      items.push(...((result.Items ?? []) as TaskItem[]));
      startKey = result.LastEvaluatedKey;
      if (!startKey) break;
    }
  };
  const [count] = await Promise.all([table.get({ Key: taskKeys.count(orgId) }), reading()]);
  return { items: items.slice(page.offset, wanted), total: Number(count.Item?.total ?? 0) };
}

function window(items: TaskItem[], page: PageRequest): Page<TaskItem> {
  items.sort(newestFirst);
  return { items: items.slice(page.offset, page.offset + page.limit), total: items.length };
}

/** Every item a Query selects, following its pages. */
async function readAll(input: QueryInput): Promise<TaskItem[]> {
  const items: TaskItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({ ...input, ExclusiveStartKey: startKey });
    items.push(...((result.Items ?? []) as TaskItem[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** The status index: an organization's tasks of one status, by priority and then id. */
const statusQuery = (orgId: string, status: TaskStatus): QueryInput => ({
  IndexName: 'gsi1',
  KeyConditionExpression: 'gsi1pk = :pk',
  ExpressionAttributeValues: { ':pk': taskKeys.byStatusPk(orgId, status) },
});

/** The first `max` tasks of one status (by priority, then id): a read that stays bounded (GET /system/health). */
export const firstTasksOfStatus = (orgId: string, status: TaskStatus, max: number): Promise<Bounded<TaskItem>> =>
  queryUpTo<TaskItem>(statusQuery(orgId, status), max);

/** How many tasks have one status, counted up to `max` (one COUNT Query of the status index, paged). */
export const countTasksOfStatus = (orgId: string, status: TaskStatus, max: number) =>
  countUpTo(statusQuery(orgId, status), max);

/** The assignee index: an assignee's tasks, all of them or of one status (then by priority and id). */
function assigneeQuery(orgId: string, assignee: string, status?: TaskStatus): QueryInput {
  const pk = taskKeys.byAssigneePk(orgId, assigneeKey(assignee));
  return status === undefined
    ? { IndexName: 'gsi2', KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': pk } }
    : {
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk AND begins_with(gsi2sk, :status)',
        ExpressionAttributeValues: { ':pk': pk, ':status': taskKeys.assigneeStatusPrefix(status) },
      };
}

const byStatus = (orgId: string, status: TaskStatus): Promise<TaskItem[]> => readAll(statusQuery(orgId, status));

/** The assignee's tasks: all of them, or one Query per status asked for. */
async function byAssignee(orgId: string, assignee: string, statuses?: TaskStatus[]): Promise<TaskItem[]> {
  if (!statuses) return readAll(assigneeQuery(orgId, assignee));
  const perStatus = await Promise.all(
    [...new Set(statuses)].map((status) => readAll(assigneeQuery(orgId, assignee, status))),
  );
  return perStatus.flat();
}

/** Candidates are read this many at a time, in priority order, until one is not held up. */
const NEXT_BATCH = 25;

/**
 * The highest-priority `todo` task (P0 first, then the oldest) of `assignee` (of anybody when
 * absent) whose dependencies are all done or cancelled; undefined when there is none. Reads todo
 * tasks in index order (the status index, or the assignee's `todo#` range), so the usual answer costs
 * one Query.
 */
export async function nextTaskItem(
  orgId: string,
  filter: { assignee?: string; productSlug?: string },
): Promise<TaskItem | undefined> {
  const todo =
    filter.assignee === undefined ? statusQuery(orgId, 'todo') : assigneeQuery(orgId, filter.assignee, 'todo');
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      ...todo,
      ScanIndexForward: true,
      Limit: NEXT_BATCH,
      ExclusiveStartKey: startKey,
    });
    for (const item of (result.Items ?? []) as TaskItem[]) {
      if (filter.productSlug !== undefined && item.product_slug !== filter.productSlug) continue;
      if (!(await hasOpenDependency(orgId, item.depends_on ?? []))) return item;
    }
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return undefined;
}

/** `assignee=me` is the caller's username; an API key with no user behind it has none (400). */
export function resolveAssignee(principal: Principal, assignee: string | undefined, path: string) {
  if (assignee?.toLowerCase() !== 'me') return assignee;
  if (!principal.username) {
    const message = 'assignee=me needs a user; this API key has no user behind it';
    throw new ValidationError(message, [{ path, message }]);
  }
  return principal.username;
}

export interface ListRequest extends TaskFilter {
  next?: boolean;
}

/**
 * GET /tasks and GET /v1/public/tasks. `next` answers a page of at most one task (`limit` 1).
 *
 * @example
 * const { items, total, limit } = await listTasks(ctx, { statuses: ['todo'], q: 'deploy' }, { limit: 50, offset: 0 });
 */
export async function listTasks(
  ctx: RequestContext,
  request: ListRequest,
  page: PageRequest,
): Promise<Page<Task> & PageRequest & { totalExact?: false }> {
  const principal = requirePrincipal(ctx);
  const { next, ...rest } = request;
  const filter: TaskFilter = { ...rest, assignee: resolveAssignee(principal, rest.assignee, 'assignee') };
  if (next) {
    if (request.statuses !== undefined || request.q !== undefined) {
      const message = 'next=true picks a todo task; it cannot be combined with status or q';
      throw new ValidationError(message, [{ path: 'next', message }]);
    }
    const item = await nextTaskItem(principal.orgId, filter);
    return { items: item ? [toTask(item)] : [], total: item ? 1 : 0, limit: 1, offset: 0 };
  }
  const { items, ...found } = await listTaskItems(principal.orgId, filter, page);
  return { ...found, items: items.map(toTask), ...page };
}

/**
 * The items `getTask` reads first (the task itself), for a caller that can read them ahead, in the same
 * round trip as the caller's credential: `getTask` then makes no call of its own for a task without
 * dependencies.
 */
export const taskReads = (orgId: string, id: number): TableKey[] => [taskKeys.byId(orgId, id)];

/** GET /tasks/{id} and GET /v1/public/tasks/{id}: the task, and what it blocks and is blocked by. */
export async function getTask(ctx: RequestContext, id: number): Promise<Task & { blocking: Blocking }> {
  const { orgId } = requirePrincipal(ctx);
  const item = await getTaskItem({ orgId, id });
  if (!item) throw new NotFoundError(`No task ${id}`);
  return { ...toTask(item), blocking: await blockingOf(orgId, item) };
}
