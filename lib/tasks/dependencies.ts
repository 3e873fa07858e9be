import { getMany } from '#lib/db/batch';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { ValidationError } from '#lib/errors';
import { type TaskItem, taskKeys, versionIs } from '#lib/tasks/task-keys';
import { isOpen, type TaskStatus } from '#lib/tasks/task-status';

/**
 * Task dependencies: `depends_on` on the task, and a reverse link per dependency so that the tasks a
 * task blocks are one Query away. Cycles are refused when written.
 */

/**
 * A cycle could still be closed by two writes racing (A → B and B → A at once): each write's
 * transaction checks that the tasks its search walked have not changed since (their `version`). The
 * first this many walked tasks are checked, which covers every dependency graph of a sensible size.
 */
const GUARDED_NODES = 40;

type Node = Pick<TaskItem, 'id' | 'version' | 'depends_on' | 'title' | 'status'>;

/** Reads tasks by id (absent ones are left out). */
export async function readTasks(orgId: string, ids: Iterable<number>): Promise<Map<number, Node>> {
  const list = [...new Set(ids)];
  const items = await getMany<TaskItem>(list.map((id) => taskKeys.byId(orgId, id)));
  const found = new Map<number, Node>();
  for (const item of items) if (item) found.set(item.id, item);
  return found;
}

const dependencyError = (message: string) => new ValidationError(message, [{ path: 'depends_on', message }]);

/**
 * Checks a new `depends_on` for task `id` (undefined while it is being created): every task exists, none
 * is the task itself, and none reaches back to it through their own dependencies. Returns the
 * transaction items that keep the answer true until commit: a version check on each walked task
 * (refused with reason `dependency-changed`).
 */
export async function checkDependencies(
  orgId: string,
  id: number | undefined,
  dependsOn: number[],
): Promise<TransactItem[]> {
  if (id !== undefined && dependsOn.includes(id)) throw dependencyError(`Task ${id} cannot depend on itself`);
  const direct = await readTasks(orgId, dependsOn);
  const missing = dependsOn.filter((dependency) => !direct.has(dependency));
  if (missing.length > 0) throw dependencyError(`No such task: ${missing.join(', ')}`);

  const walked = new Map<number, Node>(direct);
  if (id !== undefined) {
    // Breadth first over the dependencies' own dependencies, one BatchGetItem per level.
    let frontier = [...direct.values()];
    while (frontier.length > 0) {
      const next = new Set<number>();
      for (const node of frontier) {
        for (const dependency of node.depends_on ?? []) {
          if (dependency === id) {
            throw dependencyError(`Depending on task ${node.id} would close a cycle back to task ${id}`);
          }
          if (!walked.has(dependency)) next.add(dependency);
        }
      }
      const level = await readTasks(orgId, next);
      for (const [levelId, node] of level) walked.set(levelId, node);
      frontier = [...level.values()];
    }
  }
  return [...walked.values()].slice(0, GUARDED_NODES).map((node) => unchanged(orgId, node));
}

/** Refused with reason `dependency-changed` when a walked task changed before the commit. */
const unchanged = (orgId: string, node: Node): TransactItem => ({
  ConditionCheck: {
    Key: taskKeys.byId(orgId, node.id),
    ConditionExpression: versionIs,
    ExpressionAttributeValues: { ':version': node.version },
  },
  reason: 'dependency-changed',
});

/** The reverse links to add and remove when task `id`'s dependencies change. */
export function dependentLinks(orgId: string, id: number, before: number[], after: number[]): TransactItem[] {
  const added = after.filter((dependency) => !before.includes(dependency));
  const removed = before.filter((dependency) => !after.includes(dependency));
  return [
    ...added.map(
      (dependency): TransactItem => ({
        Put: { Item: { ...taskKeys.dependent(orgId, dependency, id), task_id: id } },
      }),
    ),
    ...removed.map(
      (dependency): TransactItem => ({
        Delete: { Key: taskKeys.dependent(orgId, dependency, id) },
      }),
    ),
  ];
}

/** The ids of the tasks that depend on task `id`. */
export async function dependentsOf(orgId: string, id: number): Promise<number[]> {
  const ids: number[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': taskKeys.dependentsPrefix(id) },
      ProjectionExpression: 'task_id',
      ExclusiveStartKey: startKey,
    });
    for (const item of result.Items ?? []) ids.push(Number(item.task_id));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return ids.sort((a, b) => a - b);
}

export interface TaskRef {
  id: number;
  title: string;
  status: TaskStatus;
}

export interface Blocking {
  blocked_by: TaskRef[];
  blocks: TaskRef[];
  is_blocked: boolean;
}

/** `blocking` for GET /tasks/{id}: one Query for the dependents, one BatchGetItem for both sides. */
export async function blockingOf(orgId: string, task: Pick<TaskItem, 'id' | 'depends_on'>): Promise<Blocking> {
  const dependsOn = [...(task.depends_on ?? [])].sort((a, b) => a - b);
  const dependents = await dependentsOf(orgId, task.id);
  const tasks = await readTasks(orgId, [...dependsOn, ...dependents]);
  const refs = (ids: number[]) =>
    ids.flatMap((id) => {
      const found = tasks.get(id);
      return found ? [{ id, title: found.title, status: found.status }] : [];
    });
  const blockedBy = refs(dependsOn);
  return {
    blocked_by: blockedBy,
    blocks: refs(dependents),
    is_blocked: blockedBy.some((ref) => isOpen(ref.status)),
  };
}

/** Whether any of these dependencies is neither done nor cancelled (`next` passes such tasks over). */
export async function hasOpenDependency(orgId: string, dependsOn: number[]): Promise<boolean> {
  if (dependsOn.length === 0) return false;
  const tasks = await readTasks(orgId, dependsOn);
  return [...tasks.values()].some((task) => isOpen(task.status));
}
