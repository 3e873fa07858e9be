import { getMany } from '#lib/db/batch';
import { itemExists } from '#lib/db/conditions';
import type { TransactItem } from '#lib/db/transactions';
import { ValidationError } from '#lib/errors';
import { type TaskItem, taskKeys, versionIs } from '#lib/tasks/task-keys';
import { isOpen, type TaskStatus } from '#lib/tasks/task-status';

/**
 * Task dependencies: `depends_on` on the task, and on each task it depends on the reverse, `blocks` (a
 * number set of the tasks that depend on it), kept in the same transaction that changes `depends_on`,
 * so that GET /tasks/{id} reads both sides from the task item itself. Cycles are refused when written.
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
export async function checkDependencies(orgId: string, id: number | undefined, dependsOn: number[]): Promise<Guard[]> {
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
  return [...walked.values()].slice(0, GUARDED_NODES).map((node) => ({ id: node.id, version: node.version }));
}

/** A task a dependency check walked, and the version it read: the commit is refused if it moved. */
export interface Guard {
  id: number;
  version: number;
}

/**
 * The tasks among `removed` (dependencies task `id` gives up) that still exist, with the versions read:
 * each leaves `blocks` by a write conditional on that version. Read beside the dependency check, in the
 * same round trip.
 */
export async function readRemoved(orgId: string, removed: number[]): Promise<Guard[]> {
  const found = await readTasks(orgId, removed);
  return [...found.values()].map((node) => ({ id: node.id, version: node.version }));
}

/**
 * The writes that keep the dependency graph true when task `id`'s `depends_on` goes from `before` to
 * `after`: `id` joins the `blocks` of each task it now depends on (each walked by the dependency check,
 * `guards`) and leaves those of the tasks it no longer does that still exist (`removed`, as read by
 * `readRemoved`); every other walked task is checked unchanged. Each changed task's `version` goes up,
 * so a writer that read it before puts it back only after reading it again, never with an old
 * `blocks`. A walked task that changed refuses the commit with reason `dependency-changed`; a given-up
 * one with `stale` (the caller reads again).
 */
export function dependencyWrites(input: {
  orgId: string;
  id: number;
  before: number[];
  after: number[];
  guards?: Guard[];
  removed?: Guard[];
}): TransactItem[] {
  const { orgId, id, before, after } = input;
  const guarded = new Map((input.guards ?? []).map((guard) => [guard.id, guard.version]));
  const writes: TransactItem[] = [];
  for (const dependency of after.filter((task) => !before.includes(task))) {
    writes.push(blocksChange({ orgId, id: dependency, dependent: id, add: true, version: guarded.get(dependency) }));
    guarded.delete(dependency);
  }
  for (const { id: dependency, version } of input.removed ?? []) {
    if (after.includes(dependency) || !before.includes(dependency)) continue;
    writes.push(blocksChange({ orgId, id: dependency, dependent: id, add: false, version }));
  }
  for (const [dependency, version] of guarded) {
    writes.push({
      ConditionCheck: {
        Key: taskKeys.byId(orgId, dependency),
        ConditionExpression: versionIs,
        ExpressionAttributeValues: { ':version': version },
      },
      reason: 'dependency-changed',
    });
  }
  return writes;
}

/**
 * Adds `dependent` to task `id`'s `blocks` or takes it out, raising the task's version, on condition
 * that the task is still the version read (without one, that it exists).
 */
export function blocksChange(input: {
  orgId: string;
  id: number;
  dependent: number;
  add: boolean;
  version: number | undefined;
}): TransactItem {
  const { version } = input;
  return {
    Update: {
      Key: taskKeys.byId(input.orgId, input.id),
      UpdateExpression: `${input.add ? 'ADD' : 'DELETE'} blocks :dependent SET version = version + :one`,
      ConditionExpression: version === undefined ? itemExists : versionIs,
      ExpressionAttributeValues: {
        ':dependent': new Set([input.dependent]),
        ':one': 1,
        ...(version === undefined ? {} : { ':version': version }),
      },
    },
    reason: input.add ? 'dependency-changed' : 'stale',
  };
}

/** The tasks that depend on this one (its `blocks`), in id order. */
export const blocksOf = (task: Pick<TaskItem, 'blocks'>): number[] => [...(task.blocks ?? [])].sort((a, b) => a - b);

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

/**
 * `blocking` for GET /tasks/{id}: both sides are on the task item; the titles and states of the tasks
 * they name take one BatchGetItem, none when there are none.
 */
export async function blockingOf(orgId: string, task: Pick<TaskItem, 'depends_on' | 'blocks'>): Promise<Blocking> {
  const dependsOn = [...(task.depends_on ?? [])].sort((a, b) => a - b);
  const dependents = blocksOf(task);
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
