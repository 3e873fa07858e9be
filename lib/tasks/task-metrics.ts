import { counterWrite, shardOf } from '#lib/db/counters';
import type { TransactItem } from '#lib/db/transactions';
import { ORG_SHARDS } from '#lib/metrics/metric-keys';
import { instanceTotalsWrite, orgDayWrite, orgTotalsWrite } from '#lib/metrics/metric-records';
import { assigneeKey, type TaskItem, taskKeys } from '#lib/tasks/task-keys';
import type { TaskStatus } from '#lib/tasks/task-status';

/**
 * What a task write changes in the counters the dashboards read, as writes for the write's own
 * transaction (create, update and delete each call `taskMetricWrites` with the task before and after):
 *
 * - the organization's tasks by status (`tasks_<status>`) and the instance's task total;
 * - the day's `tasks_completed`, when the task reaches done;
 * - the assignee's queue: a todo task has an entry `TASK#<queued_at>#<id>` in the partition of its
 *   assignee (lib/tasks/task-keys.ts), and the queue's count and sum of `queued_at` (epoch seconds) hold
 *   the queued count and average wait. `queued_at` is when the task last became todo; it stays through a
 *   reassignment (the entry moves to the new assignee's queue) and through edits while todo.
 *
 * Every task written here is `counted`; one written before the counters existed is counted by its next
 * write (and taken off only if it was counted), so the counters never go below what they counted.
 */

interface QueuePlace {
  assignee: string;
  queuedAt: string;
}

/** Where the task waits in a queue, if it is todo and its queue time is known. */
const queuePlace = (task: TaskItem | undefined): QueuePlace | undefined =>
  task && task.status === 'todo' && task.queued_at
    ? { assignee: assigneeKey(task.assignee ?? null), queuedAt: task.queued_at }
    : undefined;

/**
 * The `queued_at` of a task written with `status` at `at`: kept while it stays todo, `at` when it becomes
 * todo, null otherwise.
 */
export function queuedAtAfter(before: TaskItem | undefined, status: TaskStatus, at: string): string | null {
  if (status !== 'todo') return null;
  return before?.status === 'todo' && before.queued_at ? before.queued_at : at;
}

const epochSeconds = (iso: string): number => Math.floor(new Date(iso).getTime() / 1000);

function queueWrites(orgId: string, id: number, place: QueuePlace, sign: 1 | -1): TransactItem[] {
  const pk = taskKeys.queuePk(orgId, place.assignee);
  const key = { pk, sk: taskKeys.queued(place.queuedAt, id) };
  const entry: TransactItem =
    sign === 1 ? { Put: { Item: { ...key, task_id: id, queued_at: place.queuedAt } } } : { Delete: { Key: key } };
  const count = counterWrite({
    key: { pk, sk: taskKeys.queueCount(shardOf(ORG_SHARDS)) },
    add: { count: sign, since_sum: sign * epochSeconds(place.queuedAt) },
  });
  return [entry, count];
}

/**
 * The counter writes of a task going from `before` (undefined: created) to `after` (undefined: deleted),
 * for the write's transaction; `after`, when given, is written with `counted: true`.
 */
export function taskMetricWrites(
  orgId: string,
  before: TaskItem | undefined,
  after: TaskItem | undefined,
  now: Date,
): TransactItem[] {
  const writes: TransactItem[] = [];
  const counted = before?.counted === true ? before : undefined;
  const totals: Record<string, number> = {};
  if (counted) totals[`tasks_${counted.status}`] = -1;
  if (after) totals[`tasks_${after.status}`] = (totals[`tasks_${after.status}`] ?? 0) + 1;
  const changed = Object.entries(totals).filter(([, by]) => by !== 0);
  if (changed.length > 0) writes.push(orgTotalsWrite(orgId, Object.fromEntries(changed)));
  if (!counted && after) writes.push(instanceTotalsWrite({ tasks: 1 }));
  if (counted && !after) writes.push(instanceTotalsWrite({ tasks: -1 }));
  if (after?.status === 'done' && before?.status !== 'done') {
    writes.push(orgDayWrite(orgId, now, { tasks_completed: 1 }));
  }

  const id = (after ?? before)?.id as number;
  const from = queuePlace(before);
  const to = queuePlace(after);
  if (from?.assignee !== to?.assignee || from?.queuedAt !== to?.queuedAt) {
    if (from) writes.push(...queueWrites(orgId, id, from, -1));
    if (to) writes.push(...queueWrites(orgId, id, to, 1));
  }
  return writes;
}
