import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { writeMany } from '#lib/db/batch';
import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, NotFoundError } from '#lib/errors';
import { requireOrgRole } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { taskCountsChange } from '#lib/products/product-records';
import { blocksChange, blocksOf, dependencyWrites, readRemoved } from '#lib/tasks/dependencies';
import { legacyPostingKeys, removePostings, taskTerms, taskWords } from '#lib/tasks/search-index';
import { legacyDependentsOf } from '#lib/tasks/task-blocks-migration';
import { titleGuard, WRITE_ATTEMPTS } from '#lib/tasks/task-changes';
import { type TaskItem, taskKeys } from '#lib/tasks/task-keys';
import { taskMetricWrites } from '#lib/tasks/task-metrics';
import { dependsOnReplace, getTaskItem, taskCountChange, taskDelete, titleRelease } from '#lib/tasks/task-records';

/**
 * DELETE /tasks/{id}: the task goes for good. First the tasks that depend on it drop it from their
 * `depends_on` (each in its own small transaction, so any number of them can), then one transaction
 * removes the task, its title guard, its count in its product and in the counters, and its own links;
 * its search postings go last (a posting left behind finds nothing).
 */
export async function deleteTask(ctx: RequestContext, id: number): Promise<{ id: number }> {
  const principal = requireOrgRole(ctx, 'admin');
  const orgId = principal.orgId;
  const current = () => requireTask(orgId, id);
  const [first, legacy] = await Promise.all([current(), legacyDependentsOf(orgId, id)]);
  for (const dependent of new Set([...blocksOf(first), ...legacy])) {
    await dropDependency(orgId, dependent, id, ctx.ports.clock.now());
  }

  for (let attempt = 1; ; attempt += 1) {
    const item = await current();
    const dependsOn = [...(item.depends_on ?? [])];
    const removed = await readRemoved(orgId, dependsOn);
    const now = ctx.ports.clock.now();
    const guard = titleGuard(orgId, item);
    const writes: TransactItem[] = [taskDelete({ orgId, id, readVersion: item.version })];
    if (guard) writes.push(titleRelease(guard, id));
    if (item.product_slug) {
      writes.push(taskCountsChange({ orgId, slug: item.product_slug, from: item.status }) as TransactItem);
    }
    writes.push(...dependencyWrites({ orgId, id, before: dependsOn, after: [], removed }), taskCountChange(orgId, -1));
    writes.push(...taskMetricWrites(orgId, item, undefined, now));
    writes.push(
      ...activityWrites(
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
      await transact(writes);
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt < WRITE_ATTEMPTS) continue;
      throw new ConflictError('The task kept changing while it was being deleted');
    }
    await removeAllPostings(orgId, item).catch((error: Error) =>
      logger.warn('removing search postings failed', { orgId, taskId: id, error }),
    );
    return { id };
  }
}

/** A deleted task's postings: its terms, and its whole words when it was written before the term index. */
async function removeAllPostings(orgId: string, item: TaskItem): Promise<void> {
  await removePostings(orgId, item.id, taskTerms(item));
  if (!item.terms_indexed) await writeMany({ deletes: legacyPostingKeys(orgId, item.id, taskWords(item)) });
}

async function requireTask(orgId: string, id: number): Promise<TaskItem> {
  const item = await getTaskItem({ orgId, id, consistent: true });
  if (!item) throw new NotFoundError(`No task ${id}`);
  return item;
}

/**
 * Takes `removed` out of task `dependentId`'s `depends_on`, and the dependent out of `removed`'s
 * `blocks` (with the reverse link an installation may still have from before `blocks`).
 */
async function dropDependency(orgId: string, dependentId: number, removed: number, now: Date): Promise<void> {
  const link: TransactItem = { Delete: { Key: taskKeys.dependent(orgId, removed, dependentId) } };
  const unblock = blocksChange({ orgId, id: removed, dependent: dependentId, add: false, version: undefined });
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
    const dependent = await getTaskItem({ orgId, id: dependentId, consistent: true });
    if (!dependent) {
      await transact([link, unblock]);
      return;
    }
    const dependsOn = (dependent.depends_on ?? []).filter((dependency) => dependency !== removed);
    try {
      await transact([dependsOnReplace({ orgId, dependent, dependsOn, at: now.toISOString() }), link, unblock]);
      return;
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
    }
  }
  throw new ConflictError(`Task ${dependentId} kept changing while its dependency was removed; try again`);
}
