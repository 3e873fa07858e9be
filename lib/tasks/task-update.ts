import { type ActivityEntry, activityActor, activityWrites } from '#lib/activity/activity-log';
import { writeMany } from '#lib/db/batch';
import { type TransactItem, transact } from '#lib/db/transactions';
import { ConditionFailedError, ConflictError, isConditionFailed, NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { taskCountsChange } from '#lib/products/product-records';
import { checkDependencies, dependencyWrites, readRemoved } from '#lib/tasks/dependencies';
import { addPostings, legacyPostingKeys, removePostings, taskWords, termChange } from '#lib/tasks/search-index';
import {
  duplicateError,
  resolveProduct,
  type TaskChanges,
  titleGuard,
  transitionError,
  WRITE_ATTEMPTS,
  writeConflicts,
} from '#lib/tasks/task-changes';
import { announceCompletion, completionOf } from '#lib/tasks/task-completion';
import { type Task, type TaskFields, type TaskItem, type TaskRun, taskIndexes, toTask } from '#lib/tasks/task-keys';
import { queuedAtAfter, taskMetricWrites } from '#lib/tasks/task-metrics';
import { getTaskItem, taskReplace, titleClaim, titleRelease } from '#lib/tasks/task-records';
import { canMove, type TaskStatus, toTaskStatus } from '#lib/tasks/task-status';

/**
 * Changing a task, for both APIs: fields, state (along the transition table) and product. Each update
 * is one transaction conditional on the version it read; when another write got there first, the
 * update reads again and starts over.
 */

export interface UpdateOptions {
  /** DELETE /v1/public/tasks/{id} cancels from any state, past the transition table. */
  anyTransition?: boolean;
  action?: string;
  /** Refuse (reason `status-changed`) unless the task is in this state when read: a claim. */
  expectStatus?: TaskStatus;
  /** An agent run to record as the task's `last_run`. */
  lastRun?: TaskRun;
  /** More writes for the update's own transaction (the token debit of an agent run). */
  alsoWrite?: TransactItem[];
  /** Metadata for the activity entry beyond what changed. */
  activityMetadata?: Record<string, unknown>;
}

/** Who changes a task: the organization and the actor the activity log names. */
export interface TaskActor {
  orgId: string;
  activity: Pick<ActivityEntry, 'actor_type' | 'actor_id'>;
}

export async function updateTask(
  ctx: RequestContext,
  id: number,
  changes: TaskChanges,
  options: UpdateOptions = {},
): Promise<Task> {
  const principal = requirePrincipal(ctx);
  return updateTaskAs(ctx, { orgId: principal.orgId, activity: activityActor(principal) }, id, changes, options);
}

/**
 * `updateTask` for an actor that is not a caller: an agent working on its task. A claim
 * (`expectStatus`) that finds the task in another state throws ConditionFailedError `status-changed`.
 */
export async function updateTaskAs(
  ctx: RequestContext,
  actor: TaskActor,
  id: number,
  changes: TaskChanges,
  options: UpdateOptions = {},
): Promise<Task> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await updateOnce(ctx, actor, id, changes, options);
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt >= WRITE_ATTEMPTS) {
        throw new ConflictError('The task kept changing while this update was applied; try again');
      }
    }
  }
}

/** DELETE /v1/public/tasks/{id}: the task stays, cancelled. */
export async function cancelTask(ctx: RequestContext, id: number): Promise<Task> {
  return updateTask(ctx, id, { status: 'cancelled' }, { anyTransition: true, action: 'task.cancelled' });
}

const pick = <T>(change: T | undefined, before: T | null | undefined): T | null =>
  change === undefined ? (before ?? null) : change;

async function updateOnce(
  ctx: RequestContext,
  actor: TaskActor,
  id: number,
  changes: TaskChanges,
  options: UpdateOptions,
): Promise<Task> {
  const orgId = actor.orgId;
  const before = await getTaskItem({ orgId, id, consistent: true });
  if (!before) throw new NotFoundError(`No task ${id}`);
  if (options.expectStatus !== undefined && before.status !== options.expectStatus) {
    throw new ConditionFailedError('status-changed');
  }
  const status = changes.status === undefined ? before.status : toTaskStatus(changes.status);
  if (!options.anyTransition && !canMove(before.status, status)) throw transitionError(before.status, status);

  const product = changes.product === undefined ? undefined : await resolveProduct(orgId, changes.product);
  const dependsOnBefore = [...(before.depends_on ?? [])];
  const dependsOn = changes.depends_on ?? dependsOnBefore;
  const dependenciesChange =
    changes.depends_on !== undefined &&
    (dependsOn.length !== dependsOnBefore.length || dependsOn.some((dep) => !dependsOnBefore.includes(dep)));
  const [guards, removed] = dependenciesChange
    ? await Promise.all([
        checkDependencies(orgId, id, dependsOn),
        readRemoved(
          orgId,
          dependsOnBefore.filter((dependency) => !dependsOn.includes(dependency)),
        ),
      ])
    : [[], []];

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
  if (changed.length === 0 && options.lastRun === undefined) return toTask(before);

  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const completes = status === 'done' && before.status !== 'done';
  const after: TaskItem = {
    ...before,
    ...fields,
    ...taskIndexes(orgId, id, fields),
    version: before.version + 1,
    completed_at: completes ? at : (before.completed_at ?? null),
    last_run: options.lastRun ?? before.last_run ?? null,
    queued_at: queuedAtAfter(before, status, at),
    counted: true,
    terms_indexed: true,
    updated_at: at,
  };

  const writes: TransactItem[] = [taskReplace(after, before.version)];
  const oldGuard = titleGuard(orgId, before);
  const newGuard = titleGuard(orgId, fields);
  if (oldGuard?.sk !== newGuard?.sk) {
    if (oldGuard) writes.push(titleRelease(oldGuard, id));
    if (newGuard) writes.push(titleClaim(newGuard, id));
  }
  writes.push(...productCountChanges(orgId, before, fields, product));
  writes.push(...dependencyWrites({ orgId, id, before: dependsOnBefore, after: dependsOn, guards, removed }));
  writes.push(...taskMetricWrites(orgId, before, after, now));
  writes.push(
    ...activityWrites(
      orgId,
      {
        ...actor.activity,
        action: options.action ?? (status !== before.status ? `task.${status}` : 'task.updated'),
        entity_type: 'task',
        entity_id: String(id),
        metadata: {
          changed,
          ...(status !== before.status ? { from: before.status, to: status } : {}),
          ...options.activityMetadata,
        },
      },
      now,
    ),
  );
  const task = toTask(after);
  const completion = completes ? await completionOf(orgId, task, fields, now) : undefined;
  if (completion) writes.push(...completion.writes);
  writes.push(...(options.alsoWrite ?? []));

  const terms = termChange(before, fields);
  if (terms.added.length > 0) await addPostings(orgId, id, terms.added, after.version);
  try {
    await transact(writes, writeConflicts(product));
  } catch (error) {
    if (isConditionFailed(error, 'duplicate')) throw await duplicateError(orgId, fields);
    throw error;
  }
  await removeStalePostings(orgId, before, terms.removed, after.version).catch((error: Error) =>
    logger.warn('removing stale search postings failed', { orgId, taskId: id, error }),
  );
  await announceCompletion(ctx, completion);
  return task;
}

/**
 * After an update commits: the postings of the terms it removed (those no newer than its version), and
 * the whole-word postings of a task written before the term index, which its terms now replace.
 */
async function removeStalePostings(orgId: string, before: TaskItem, removed: string[], version: number) {
  if (removed.length > 0) await removePostings(orgId, before.id, removed, version);
  if (!before.terms_indexed) await writeMany({ deletes: legacyPostingKeys(orgId, before.id, taskWords(before)) });
}

/**
 * The product counts a change moves: within the same product from one state to the other, or out of
 * the old product and into the new one (which must still exist: reason `product-gone`).
 */
function productCountChanges(
  orgId: string,
  before: TaskItem,
  fields: TaskFields,
  product: { slug: string } | null | undefined,
): TransactItem[] {
  const productBefore = before.product_slug ?? null;
  const productAfter = fields.product_slug;
  const changes =
    productBefore === productAfter
      ? [
          productAfter
            ? taskCountsChange({ orgId, slug: productAfter, from: before.status, to: fields.status })
            : undefined,
        ]
      : [
          productBefore ? taskCountsChange({ orgId, slug: productBefore, from: before.status }) : undefined,
          productAfter && product
            ? taskCountsChange({ orgId, slug: productAfter, to: fields.status, reason: 'product-gone' })
            : undefined,
        ];
  return changes.filter((change): change is TransactItem => change !== undefined);
}
