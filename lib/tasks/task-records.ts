import { itemIsNew } from '#lib/db/conditions';
import type { TableKey } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { type TaskItem, taskKeys, titleFreeOrHeldBy, versionIs } from '#lib/tasks/task-keys';

/**
 * The access patterns of one task and the records written with it (keys and item types:
 * lib/tasks/task-keys.ts; lists: lib/tasks/task-queries.ts). Writes are answered as items for the
 * caller's transaction, each refused under a reason code:
 *
 * | reason | refused when |
 * |---|---|
 * | `stale` | the task is no longer the version the writer read |
 * | `duplicate` | another open task holds the title |
 */

export async function getTaskItem(input: {
  orgId: string;
  id: number;
  consistent?: boolean;
}): Promise<TaskItem | undefined> {
  const { Item } = await table.get({
    Key: taskKeys.byId(input.orgId, input.id),
    ConsistentRead: input.consistent ?? false,
  });
  return Item as TaskItem | undefined;
}

/** Writes a new task. */
export const newTaskPut = (item: TaskItem): TransactItem => ({
  Put: { Item: item, ConditionExpression: itemIsNew },
});

/** Replaces a task with its next version, only while it is still the version read. */
export const taskReplace = (item: TaskItem, readVersion: number): TransactItem => ({
  Put: { Item: item, ConditionExpression: versionIs, ExpressionAttributeValues: { ':version': readVersion } },
  reason: 'stale',
});

/** Deletes a task, only while it is still the version read. */
export const taskDelete = (input: { orgId: string; id: number; readVersion: number }): TransactItem => ({
  Delete: {
    Key: taskKeys.byId(input.orgId, input.id),
    ConditionExpression: versionIs,
    ExpressionAttributeValues: { ':version': input.readVersion },
  },
  reason: 'stale',
});

/** Sets a dependent's `depends_on` after a task it depended on went away. */
export const dependsOnReplace = (input: {
  orgId: string;
  dependent: TaskItem;
  dependsOn: number[];
  at: string;
}): TransactItem => ({
  Update: {
    Key: taskKeys.byId(input.orgId, input.dependent.id),
    UpdateExpression: 'SET depends_on = :dependsOn, version = :next, updated_at = :at',
    ConditionExpression: versionIs,
    ExpressionAttributeValues: {
      ':dependsOn': input.dependsOn,
      ':version': input.dependent.version,
      ':next': input.dependent.version + 1,
      ':at': input.at,
    },
  },
  reason: 'stale',
});

/** Takes an open title for task `taskId`; refused with reason `duplicate` while another task holds it. */
export const titleClaim = (guard: TableKey, taskId: number): TransactItem => ({
  Put: { Item: { ...guard, task_id: taskId }, ConditionExpression: itemIsNew },
  reason: 'duplicate',
});

/** Gives up task `taskId`'s open title (a title another task holds is left alone). */
export const titleRelease = (guard: TableKey, taskId: number): TransactItem => ({
  Delete: {
    Key: guard,
    ConditionExpression: titleFreeOrHeldBy,
    ExpressionAttributeValues: { ':id': taskId },
  },
});

/** The id of the task that holds an open title, or null when none does. */
export async function titleHolder(guard: TableKey): Promise<number | null> {
  const { Item } = await table.get({ Key: guard, ConsistentRead: true });
  return Item ? Number(Item.task_id) : null;
}

/** The organization's task total (the unfiltered list's `meta.total`), in create's and delete's transactions. */
export const taskCountChange = (orgId: string, by: 1 | -1): TransactItem => ({
  Update: {
    Key: taskKeys.count(orgId),
    UpdateExpression: 'ADD #total :by',
    ExpressionAttributeNames: { '#total': 'total' },
    ExpressionAttributeValues: { ':by': by },
  },
});
