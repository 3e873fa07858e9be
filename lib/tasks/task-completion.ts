import { changelogWrite } from '#lib/changelog/changelog';
import type { TransactItem } from '#lib/db/transactions';
import type { RequestContext } from '#lib/kernel/context';
import type { Task, TaskFields } from '#lib/tasks/task-keys';
import { type PreparedEvent, prepareEvent, queuePrepared } from '#lib/webhooks/outbound/events';

/**
 * What a write that completes a task adds: a changelog entry and the `task_completed` delivery record,
 * both in the write's own transaction, so a completion is recorded and announced exactly when it
 * happens; the delivery's queue message follows the commit.
 */
export interface Completion {
  writes: TransactItem[];
  event: PreparedEvent | undefined;
}

export async function completionOf(orgId: string, task: Task, fields: TaskFields, now: Date): Promise<Completion> {
  const event = await prepareEvent(orgId, 'task_completed', { task }, now);
  const entry = changelogWrite(
    orgId,
    {
      title: `Completed task #${task.id}: ${fields.title}`,
      area: fields.product_slug ?? 'tasks',
      agent: fields.assignee,
      task_id: task.id,
      product: fields.product_slug,
    },
    now,
  );
  return { writes: event ? [entry, event.write] : [entry], event };
}

/** After the commit: the event's message goes on the queue (or, failing that, the sweeper's). */
export async function announceCompletion(ctx: RequestContext, completion: Completion | undefined): Promise<void> {
  if (completion?.event) await queuePrepared(ctx, completion.event);
}
