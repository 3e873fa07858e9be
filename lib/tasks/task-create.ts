import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { type TransactItem, transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { taskCountsChange } from '#lib/products/product-records';
import { checkDependencies, dependencyWrites } from '#lib/tasks/dependencies';
import { addPostings, removePostings, taskTerms } from '#lib/tasks/search-index';
import { duplicateError, resolveProduct, type TaskChanges, titleGuard, writeConflicts } from '#lib/tasks/task-changes';
import { announceCompletion, completionOf } from '#lib/tasks/task-completion';
import { type Task, type TaskFields, type TaskItem, taskIndexes, taskKeys, toTask } from '#lib/tasks/task-keys';
import { queuedAtAfter, taskMetricWrites } from '#lib/tasks/task-metrics';
import { newTaskPut, taskCountChange, titleClaim } from '#lib/tasks/task-records';
import { type TaskPriority, toTaskStatus } from '#lib/tasks/task-status';

/**
 * Creating a task, for both APIs: one transaction writes the task, its open-title guard, its product's
 * count, its dependency links, the organization's task count and counters, an activity entry and, for
 * a task created done, its completion. Search postings are written before it (lib/tasks/search-index.ts).
 */

const DEFAULT_PRIORITY: TaskPriority = 'P2';

export async function createTask(ctx: RequestContext, input: TaskChanges & { title: string }): Promise<Task> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const product = input.product ? await resolveProduct(orgId, input.product) : null;
  const dependsOn = input.depends_on ?? [];
  const guards = await checkDependencies(orgId, undefined, dependsOn);
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
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const item: TaskItem = {
    ...taskKeys.byId(orgId, id),
    ...taskIndexes(orgId, id, fields),
    ...fields,
    id,
    version: 1,
    completed_at: fields.status === 'done' ? at : null,
    queued_at: queuedAtAfter(undefined, fields.status, at),
    counted: true,
    terms_indexed: true,
    created_at: at,
    updated_at: at,
    created_by: activityActor(principal).actor_id,
  };

  const guard = titleGuard(orgId, fields);
  const writes: TransactItem[] = [newTaskPut(item)];
  if (guard) writes.push(titleClaim(guard, id));
  if (product) {
    writes.push(
      taskCountsChange({
        orgId,
        slug: product.slug,
        to: fields.status,
        reason: 'product-gone',
      }) as TransactItem,
    );
  }
  writes.push(...dependencyWrites({ orgId, id, before: [], after: dependsOn, guards }), taskCountChange(orgId, 1));
  writes.push(...taskMetricWrites(orgId, undefined, item, now));
  writes.push(
    ...activityWrites(
      orgId,
      { ...activityActor(principal), action: 'task.created', entity_type: 'task', entity_id: String(id) },
      now,
    ),
  );
  const task = toTask(item);
  const completion = fields.status === 'done' ? await completionOf(orgId, task, fields, now) : undefined;
  if (completion) writes.push(...completion.writes);

  const terms = taskTerms(fields);
  await addPostings(orgId, id, terms, item.version);
  try {
    await transact(writes, writeConflicts(product));
  } catch (error) {
    await removePostings(orgId, id, terms).catch(() => undefined);
    if (isConditionFailed(error, 'duplicate')) throw await duplicateError(orgId, fields);
    throw error;
  }
  await announceCompletion(ctx, completion);
  return task;
}
