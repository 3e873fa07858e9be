import { activityActor, activityWrite } from '#lib/activity/activity-log';
import { changelogWrite } from '#lib/changelog/changelog';
import type { Principal, RequestContext } from '#lib/context';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { itemIsNew, type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError, ValidationError } from '#lib/errors';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import type { MessageQueue } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import {
  getProductById,
  getProductBySlug,
  type ProductItem,
  taskCountsChange,
} from '#lib/products/product-keys';
import {
  type Blocking,
  blockingOf,
  checkDependencies,
  dependentLinks,
  dependentsOf,
} from '#lib/tasks/dependencies';
import { addPostings, postingChange, removePostings, taskWords } from '#lib/tasks/search-index';
import {
  type Task,
  type TaskFields,
  type TaskItem,
  taskIndexes,
  taskKeys,
  titleKey,
  toTask,
} from '#lib/tasks/task-keys';
import {
  canMove,
  isOpen,
  TASK_TRANSITIONS,
  type TaskPriority,
  type TaskStatus,
  type TaskStatusInput,
  toTaskStatus,
} from '#lib/tasks/task-status';
import { type PreparedEvent, prepareEvent, queuePrepared } from '#lib/webhooks/outbound/events';

/**
 * Tasks: create, read, update, cancel and delete, for both APIs. Every write is one transaction over
 * the task, its open-title guard, its product's counts, its dependency links, an activity entry and,
 * on completion, a changelog entry and the `task_completed` delivery record; the search postings and
 * the delivery's queue message follow it.
 */

export interface TaskDeps {
  queue: MessageQueue;
}

/** The product a write names: by slug (operational API) or by id (public API); null for none. */
export type ProductRef = { slug: string | null } | { id: number | null };

export interface TaskChanges {
  title?: string;
  description?: string | null;
  status?: TaskStatusInput;
  priority?: TaskPriority;
  assignee?: string | null;
  product?: ProductRef;
  category?: string | null;
  tags?: string | null;
  type?: string | null;
  estimated_minutes?: number | null;
  due_date?: string | null;
  resolution?: string | null;
  max_duration_seconds?: number | null;
  depends_on?: number[];
}

const DEFAULT_PRIORITY: TaskPriority = 'P2';

/** A write that read a task, then found it changed at commit, starts over this often. */
const WRITE_ATTEMPTS = 4;

export async function getTaskItem(
  orgId: string,
  id: number,
  consistent = false,
): Promise<TaskItem | undefined> {
  const { Item } = await table.get({ Key: taskKeys.byId(orgId, id), ConsistentRead: consistent });
  return Item as TaskItem | undefined;
}

async function requireTaskItem(orgId: string, id: number, consistent = false): Promise<TaskItem> {
  const item = await getTaskItem(orgId, id, consistent);
  if (!item) throw new NotFoundError(`No task ${id}`);
  return item;
}

async function resolveProduct(orgId: string, ref: ProductRef): Promise<ProductItem | null> {
  if ('slug' in ref) {
    if (ref.slug === null) return null;
    const product = await getProductBySlug(orgId, ref.slug);
    if (!product) {
      const message = `No product with slug ${ref.slug}`;
      throw new ValidationError(message, [{ path: 'body.product_slug', message }]);
    }
    return product;
  }
  if (ref.id === null) return null;
  const product = await getProductById(orgId, ref.id);
  if (!product) {
    const message = `No product ${ref.id}`;
    throw new ValidationError(message, [{ path: 'body.product_id', message }]);
  }
  return product;
}

/** The open-title guard for the task's state, or none when the task is done or cancelled. */
const titleGuard = (orgId: string, fields: Pick<TaskFields, 'title' | 'status' | 'product_id'>) =>
  isOpen(fields.status) ? taskKeys.openTitle(orgId, fields.product_id, titleKey(fields.title)) : undefined;

/** The 409 for a duplicate, naming the open task that holds the title. */
async function duplicateError(orgId: string, fields: Pick<TaskFields, 'title' | 'status' | 'product_id'>) {
  const guard = titleGuard(orgId, fields);
  const holder = guard ? (await table.get({ Key: guard, ConsistentRead: true })).Item : undefined;
  const message = fields.product_id
    ? 'An open task with this title exists in this product'
    : 'An open task with this title exists (outside any product)';
  return new ConflictError(message, [
    { path: 'body.title', message, existing_id: holder ? Number(holder.task_id) : null },
  ]);
}

function transitionError(from: TaskStatus, to: TaskStatus): ConflictError {
  const allowed = TASK_TRANSITIONS[from];
  const message = `A task cannot move from ${from} to ${to}; allowed: ${allowed.join(', ')}`;
  return new ConflictError(message, [{ path: 'body.status', message, from, to, allowed }]);
}

/**
 * The `task_completed` event of a write that completes a task, prepared for its transaction: the
 * delivery record commits with the task, so a completion is announced exactly when it happens.
 */
const completionEvent = (orgId: string, task: Task, now: Date) =>
  prepareEvent(orgId, 'task_completed', { task }, now);

/** After the commit: the event's message goes on the queue (or, failing that, the sweeper's). */
async function announceCompletion(event: PreparedEvent | undefined, ctx: RequestContext, deps: TaskDeps) {
  if (event) await queuePrepared(ctx, event);
}

function completionEntry(orgId: string, fields: TaskFields, id: number, now: Date): TransactItem {
  return changelogWrite(
    orgId,
    {
      title: `Completed task #${id}: ${fields.title}`,
      area: fields.product_slug ?? 'tasks',
      agent: fields.assignee,
      task_id: id,
      product: fields.product_slug,
    },
    now,
  );
}

export async function createTask(
  ctx: RequestContext,
  input: TaskChanges & { title: string },
  deps: TaskDeps,
) {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const product = input.product ? await resolveProduct(orgId, input.product) : null;
  const dependsOn = input.depends_on ?? [];
  const dependencyChecks = await checkDependencies(orgId, undefined, dependsOn);
  const fields: TaskFields = {
    title: input.title,
    description: input.description ?? null,
    status: toTaskStatus(input.status ?? 'todo'),
    priority: input.priority ?? DEFAULT_PRIORITY,
    assignee: input.assignee ?? null,
    product_id: product?.id ?? null,
    product_slug: product?.slug ?? null,
    category: input.category ?? null,
    tags: input.tags ?? null,
    type: input.type ?? null,
    estimated_minutes: input.estimated_minutes ?? null,
    due_date: input.due_date ?? null,
    resolution: input.resolution ?? null,
    max_duration_seconds: input.max_duration_seconds ?? null,
    depends_on: dependsOn,
  };
  const id = await nextId(counterKey(taskKeys.counter, tenantPk(orgId)));
  const now = ctx.clock.now();
  const at = now.toISOString();
  const item: TaskItem = {
    ...taskKeys.byId(orgId, id),
    ...taskIndexes(orgId, id, fields),
    ...fields,
    id,
    version: 1,
    completed_at: fields.status === 'done' ? at : null,
    created_at: at,
    updated_at: at,
    created_by: activityActor(principal).actor_id,
  };

  const guard = titleGuard(orgId, fields);
  const writes: TransactItem[] = [{ Put: { Item: item, ConditionExpression: itemIsNew } }];
  const conflicts: Record<number, () => Error> = {};
  if (guard) {
    conflicts[writes.length] = () => new ConflictError('duplicate');
    writes.push({
      Put: { Item: { ...guard, task_id: id }, ConditionExpression: itemIsNew },
    });
  }
  if (product) {
    conflicts[writes.length] = () => productGone(product);
    writes.push(taskCountsChange(orgId, product.slug, { to: fields.status }) as TransactItem);
  }
  for (const check of dependencyChecks) {
    conflicts[writes.length] = () => dependenciesChanged();
    writes.push(check);
  }
  writes.push(...dependentLinks(orgId, id, [], dependsOn), countChange(orgId, 1));
  writes.push(
    activityWrite(
      orgId,
      { ...activityActor(principal), action: 'task.created', entity_type: 'task', entity_id: String(id) },
      now,
    ),
  );
  const task = toTask(item);
  const event = fields.status === 'done' ? await completionEvent(orgId, task, now) : undefined;
  if (fields.status === 'done') writes.push(completionEntry(orgId, fields, id, now));
  if (event) writes.push(event.write);

  const words = taskWords(fields);
  await addPostings(orgId, id, words, item.version);
  try {
    await transact(writes, conflicts);
  } catch (error) {
    await removePostings(orgId, id, words).catch(() => undefined);
    if (error instanceof ConflictError && error.message === 'duplicate')
      throw await duplicateError(orgId, fields);
    throw error;
  }
  await announceCompletion(event, ctx, deps);
  return task;
}

/** The organization's task total (the unfiltered list's `meta.total`), in create's and delete's transactions. */
const countChange = (orgId: string, by: 1 | -1): TransactItem => ({
  Update: {
    Key: taskKeys.count(orgId),
    UpdateExpression: 'ADD #total :by',
    ExpressionAttributeNames: { '#total': 'total' },
    ExpressionAttributeValues: { ':by': by },
  },
});

const productGone = (product: ProductItem) => {
  const message = `Product ${product.slug} was removed while the task was being written`;
  return new ValidationError(message, [{ path: 'body.product', message }]);
};

const dependenciesChanged = () =>
  new ConflictError('A task this one depends on changed at the same moment; try again');

/** A version mismatch at commit: somebody else wrote the task in between, so the write starts over. */
class StaleRead extends Error {}

export interface UpdateOptions {
  /** DELETE /v1/public/tasks/{id} cancels from any state, past the transition table. */
  anyTransition?: boolean;
  action?: string;
}

export async function updateTask(
  ctx: RequestContext,
  id: number,
  changes: TaskChanges,
  deps: TaskDeps,
  options: UpdateOptions = {},
): Promise<Task> {
  const principal = requirePrincipal(ctx);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await updateOnce(ctx, principal, id, changes, deps, options);
    } catch (error) {
      if (!(error instanceof StaleRead)) throw error;
      if (attempt >= WRITE_ATTEMPTS) {
        throw new ConflictError('The task kept changing while this update was applied; try again');
      }
    }
  }
}

async function updateOnce(
  ctx: RequestContext,
  principal: Principal,
  id: number,
  changes: TaskChanges,
  deps: TaskDeps,
  options: UpdateOptions,
): Promise<Task> {
  const orgId = principal.orgId;
  const before = await requireTaskItem(orgId, id, true);
  const status = changes.status === undefined ? before.status : toTaskStatus(changes.status);
  if (!options.anyTransition && !canMove(before.status, status)) throw transitionError(before.status, status);

  const product = changes.product === undefined ? undefined : await resolveProduct(orgId, changes.product);
  const dependsOnBefore = [...(before.depends_on ?? [])];
  const dependsOn = changes.depends_on ?? dependsOnBefore;
  const dependenciesChange =
    changes.depends_on !== undefined &&
    (dependsOn.length !== dependsOnBefore.length || dependsOn.some((dep) => !dependsOnBefore.includes(dep)));
  const dependencyChecks = dependenciesChange ? await checkDependencies(orgId, id, dependsOn) : [];

  const fields: TaskFields = {
    title: changes.title ?? before.title,
    description: changes.description === undefined ? (before.description ?? null) : changes.description,
    status,
    priority: changes.priority ?? before.priority,
    assignee: changes.assignee === undefined ? (before.assignee ?? null) : changes.assignee,
    product_id: product === undefined ? (before.product_id ?? null) : (product?.id ?? null),
    product_slug: product === undefined ? (before.product_slug ?? null) : (product?.slug ?? null),
    category: pick(changes.category, before.category),
    tags: pick(changes.tags, before.tags),
    type: pick(changes.type, before.type),
    estimated_minutes: pick(changes.estimated_minutes, before.estimated_minutes),
    due_date: pick(changes.due_date, before.due_date),
    resolution: pick(changes.resolution, before.resolution),
    max_duration_seconds: pick(changes.max_duration_seconds, before.max_duration_seconds),
    depends_on: dependsOn,
  };
  const changed = (Object.keys(fields) as Array<keyof TaskFields>).filter(
    (key) => JSON.stringify(fields[key]) !== JSON.stringify(before[key] ?? null),
  );
  if (changed.length === 0) return toTask(before);

  const now = ctx.clock.now();
  const at = now.toISOString();
  const completes = status === 'done' && before.status !== 'done';
  const after: TaskItem = {
    ...before,
    ...fields,
    ...taskIndexes(orgId, id, fields),
    version: before.version + 1,
    completed_at: completes ? at : (before.completed_at ?? null),
    updated_at: at,
  };

  const writes: TransactItem[] = [
    {
      Put: {
        Item: after,
        ConditionExpression: 'version = :version',
        ExpressionAttributeValues: { ':version': before.version },
      },
    },
  ];
  const conflicts: Record<number, () => Error> = { 0: () => new StaleRead() };

  const oldGuard = titleGuard(orgId, before);
  const newGuard = titleGuard(orgId, fields);
  if (oldGuard?.sk !== newGuard?.sk) {
    if (oldGuard) {
      writes.push({
        Delete: {
          Key: oldGuard,
          ConditionExpression: 'attribute_not_exists(pk) OR task_id = :id',
          ExpressionAttributeValues: { ':id': id },
        },
      });
    }
    if (newGuard) {
      conflicts[writes.length] = () => new ConflictError('duplicate');
      writes.push({
        Put: { Item: { ...newGuard, task_id: id }, ConditionExpression: itemIsNew },
      });
    }
  }

  const productBefore = before.product_slug ?? null;
  const productAfter = fields.product_slug;
  if (productBefore === productAfter) {
    const counts = productAfter
      ? taskCountsChange(orgId, productAfter, { from: before.status, to: status })
      : undefined;
    if (counts) writes.push(counts);
  } else {
    if (productBefore)
      writes.push(taskCountsChange(orgId, productBefore, { from: before.status }) as TransactItem);
    if (productAfter && product) {
      conflicts[writes.length] = () => productGone(product);
      writes.push(taskCountsChange(orgId, productAfter, { to: status }) as TransactItem);
    }
  }
  for (const check of dependencyChecks) {
    conflicts[writes.length] = () => dependenciesChanged();
    writes.push(check);
  }
  writes.push(...dependentLinks(orgId, id, dependsOnBefore, dependsOn));
  writes.push(
    activityWrite(
      orgId,
      {
        ...activityActor(principal),
        action: options.action ?? (status !== before.status ? `task.${status}` : 'task.updated'),
        entity_type: 'task',
        entity_id: String(id),
        metadata: { changed, ...(status !== before.status ? { from: before.status, to: status } : {}) },
      },
      now,
    ),
  );
  const task = toTask(after);
  const event = completes ? await completionEvent(orgId, task, now) : undefined;
  if (completes) writes.push(completionEntry(orgId, fields, id, now));
  if (event) writes.push(event.write);

  const words = postingChange(taskWords(before), taskWords(fields));
  if (words.added.length > 0) await addPostings(orgId, id, words.added, after.version);
  try {
    await transact(writes, conflicts);
  } catch (error) {
    if (error instanceof ConflictError && error.message === 'duplicate')
      throw await duplicateError(orgId, fields);
    throw error;
  }
  if (words.removed.length > 0) {
    await removePostings(orgId, id, words.removed, after.version).catch((error: Error) =>
      logger.warn('removing stale search postings failed', { orgId, taskId: id, error }),
    );
  }
  await announceCompletion(event, ctx, deps);
  return task;
}

const pick = <T>(change: T | undefined, before: T | null | undefined): T | null =>
  change === undefined ? (before ?? null) : change;

export async function getTask(ctx: RequestContext, id: number): Promise<Task & { blocking: Blocking }> {
  const { orgId } = requirePrincipal(ctx);
  const item = await requireTaskItem(orgId, id);
  return { ...toTask(item), blocking: await blockingOf(orgId, item) };
}

/** DELETE /v1/public/tasks/{id}: the task stays, cancelled. */
export async function cancelTask(ctx: RequestContext, id: number, deps: TaskDeps): Promise<Task> {
  return updateTask(ctx, id, { status: 'cancelled' }, deps, {
    anyTransition: true,
    action: 'task.cancelled',
  });
}

/**
 * DELETE /tasks/{id}: the task goes for good. First the tasks that depend on it drop it from their
 * `depends_on` (each in its own small transaction, so any number of them can), then one transaction
 * removes the task, its title guard, its count in its product and its own links; its search postings
 * go last (a posting left behind finds nothing).
 */
export async function deleteTask(ctx: RequestContext, id: number): Promise<{ id: number }> {
  const principal = requireOrgRole(ctx, 'admin');
  const orgId = principal.orgId;
  await requireTaskItem(orgId, id, true);
  for (const dependent of await dependentsOf(orgId, id))
    await dropDependency(orgId, dependent, id, ctx.clock.now());

  for (let attempt = 1; ; attempt += 1) {
    const item = await requireTaskItem(orgId, id, true);
    const now = ctx.clock.now();
    const writes: TransactItem[] = [
      {
        Delete: {
          Key: taskKeys.byId(orgId, id),
          ConditionExpression: 'version = :version',
          ExpressionAttributeValues: { ':version': item.version },
        },
      },
    ];
    const guard = titleGuard(orgId, item);
    if (guard) {
      writes.push({
        Delete: {
          Key: guard,
          ConditionExpression: 'attribute_not_exists(pk) OR task_id = :id',
          ExpressionAttributeValues: { ':id': id },
        },
      });
    }
    if (item.product_slug) {
      writes.push(taskCountsChange(orgId, item.product_slug, { from: item.status }) as TransactItem);
    }
    writes.push(...dependentLinks(orgId, id, [...(item.depends_on ?? [])], []), countChange(orgId, -1));
    writes.push(
      activityWrite(
        orgId,
        {
          ...activityActor(principal),
          action: 'task.deleted',
          entity_type: 'task',
          entity_id: String(id),
          metadata: { title: item.title },
        },
        now,
      ),
    );
    try {
      await transact(writes, { 0: () => new StaleRead() });
    } catch (error) {
      if (error instanceof StaleRead && attempt < WRITE_ATTEMPTS) continue;
      if (error instanceof StaleRead)
        throw new ConflictError('The task kept changing while it was being deleted');
      throw error;
    }
    await removePostings(orgId, id, taskWords(item)).catch((error: Error) =>
      logger.warn('removing search postings failed', { orgId, taskId: id, error }),
    );
    return { id };
  }
}

/** Takes `removed` out of task `dependentId`'s `depends_on`, with its reverse link. */
async function dropDependency(orgId: string, dependentId: number, removed: number, now: Date): Promise<void> {
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
    const dependent = await getTaskItem(orgId, dependentId, true);
    const link: TransactItem = {
      Delete: { Key: taskKeys.dependent(orgId, removed, dependentId) },
    };
    if (!dependent) {
      await transact([link]);
      return;
    }
    try {
      await transact(
        [
          {
            Update: {
              Key: taskKeys.byId(orgId, dependentId),
              UpdateExpression: 'SET depends_on = :dependsOn, version = :next, updated_at = :at',
              ConditionExpression: 'version = :version',
              ExpressionAttributeValues: {
                ':dependsOn': (dependent.depends_on ?? []).filter((id) => id !== removed),
                ':version': dependent.version,
                ':next': dependent.version + 1,
                ':at': now.toISOString(),
              },
            },
          },
          link,
        ],
        { 0: () => new StaleRead() },
      );
      return;
    } catch (error) {
      if (!(error instanceof StaleRead)) throw error;
    }
  }
  throw new ConflictError(`Task ${dependentId} kept changing while its dependency was removed; try again`);
}
