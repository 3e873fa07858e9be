import { createHash } from 'node:crypto';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import type { TaskPriority, TaskStatus } from '#lib/tasks/task-status';

/**
 * Where tasks live in the table (search postings, in a partition of their own: lib/tasks/search-index.ts; reads:
 * lib/tasks/task-queries.ts; single-task reads and write items: lib/tasks/task-records.ts).
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | task | `T#<org>` | `TASK#<id>` | `version` is raised by every write |
 * | … by status | gsi1 `T#<org>#TASKS#<status>` | `<priority>#<id>` | lists by status, `next` |
 * | … by assignee | gsi2 `T#<org>#ASSIGNEE#<assignee>` | `<status>#<priority>#<id>` | an assignee's tasks |
 * | (legacy) dependent link | `T#<org>` | `TASKBLOCKS#<id>#<dependent id>` | moved onto `blocks` (migration) |
 * | open title | `T#<org>` | `TASKTITLE#<product id or 0>#<sha256 of folded title>` | the duplicate check |
 * | task count | `T#<org>` | `TASKCOUNT` | `total`, changed in each create's and delete's transaction |
 * | queued task | `T#<org>#QUEUE#<assignee>` | `TASK#<queued_at>#<id>` | a todo task, oldest first (task-metrics.ts) |
 * | queue count | `T#<org>#QUEUE#<assignee>` | `COUNT#<shard>` | `count`, `since_sum` (epoch seconds): the wait times |
 *
 * A task carries both sides of its dependencies: `depends_on`, and `blocks`, the tasks that depend on it
 * (lib/tasks/dependencies.ts keeps them in step), so that reading a task reads its blocking information.
 * An open title is held while its task is open (not done or cancelled).
 * Within a status, both index sort keys run by priority and then id, so `next` is the first item of a
 * Query: of the status partition, or of the assignee's partition narrowed to `todo#`. An assignee's
 * tasks, of any or some states, are one Query away.
 */
export const taskKeys = {
  byId: (orgId: string, id: number): TableKey => ({ pk: tenantPk(orgId), sk: `TASK#${pad(id)}` }),
  prefix: 'TASK#',
  counter: 'tasks',
  count: (orgId: string): TableKey => ({ pk: tenantPk(orgId), sk: 'TASKCOUNT' }),
  byStatusPk: (orgId: string, status: TaskStatus): string => `${tenantPk(orgId)}#TASKS#${status}`,
  byAssigneePk: (orgId: string, assigneeKey: string): string => `${tenantPk(orgId)}#ASSIGNEE#${assigneeKey}`,
  indexSort: (priority: TaskPriority, id: number): string => `${priority}#${pad(id)}`,
  /** The assignee index's sort key: by status, then as the status index sorts. */
  assigneeSort: (status: TaskStatus, priority: TaskPriority, id: number): string => `${status}#${priority}#${pad(id)}`,
  /** The assignee index's sort key prefix of one status. */
  assigneeStatusPrefix: (status: TaskStatus): string => `${status}#`,
  /** Where installations before `blocks` kept the reverse of `depends_on`: read only to move it. */
  dependent: (orgId: string, id: number, dependentId: number): TableKey => ({
    pk: tenantPk(orgId),
    sk: `TASKBLOCKS#${pad(id)}#${pad(dependentId)}`,
  }),
  dependentsPrefix: (id: number): string => `TASKBLOCKS#${pad(id)}#`,
  /** The todo tasks of one assignee (`-` for none), in a partition of their own: the queue health dashboard. */
  queuePk: (orgId: string, assigneeKey: string): string => `${tenantPk(orgId)}#QUEUE#${assigneeKey}`,
  queued: (queuedAt: string, id: number): string => `TASK#${queuedAt}#${pad(id)}`,
  queueCount: (shard: number): string => `COUNT#${shard}`,
  openTitle: (orgId: string, productId: number | null, titleKey: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `TASKTITLE#${productId ?? 0}#${createHash('sha256').update(titleKey).digest('hex')}`,
  }),
};

/** The assignee index's partition for tasks without an assignee. */
export const UNASSIGNED = '-';

/** Titles compare ignoring case and runs of white space. */
export const titleKey = (title: string): string => title.trim().replace(/\s+/g, ' ').toLowerCase();

/** Assignees compare ignoring case. */
export const assigneeKey = (assignee: string | null): string => (assignee ? assignee.trim().toLowerCase() : UNASSIGNED);

export interface TaskFields {
  title: string;
  description: string | null;
  status: TaskStatus;
  priority: TaskPriority;
  assignee: string | null;
  product_id: number | null;
  product_slug: string | null;
  category: string | null;
  tags: string | null;
  type: string | null;
  estimated_minutes: number | null;
  due_date: string | null;
  resolution: string | null;
  max_duration_seconds: number | null;
  depends_on: number[];
}

/** An agent's run of a task (lib/agents/agent-tick.ts), as the task keeps the last one. */
export interface TaskRun {
  agent: string;
  status: 'succeeded' | 'failed';
  /** Runs of this task so far, this one included. */
  attempt: number;
  output: Record<string, unknown> | null;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  model: string | null;
  error: string | null;
  started_at: string;
  finished_at: string;
}

export interface TaskItem extends TaskFields {
  pk: string;
  sk: string;
  gsi1pk: string;
  gsi1sk: string;
  gsi2pk: string;
  gsi2sk: string;
  id: number;
  /** Raised by every write; each write is conditional on the one it read. */
  version: number;
  /** The tasks whose `depends_on` names this one (a number set; absent when none). */
  blocks?: Set<number>;
  completed_at: string | null;
  last_run?: TaskRun | null;
  /** While todo: since when (kept through reassignment), for the queue's wait times. */
  queued_at?: string | null;
  /**
   * The task is in the organization's counters (lib/tasks/task-metrics.ts). A task written before the
   * counters existed is not, until its next write counts it.
   */
  counted?: boolean;
  /**
   * The task's search terms are in the term index (lib/tasks/search-index.ts). A task written before
   * that index existed is not, until its next write or infra/migrations/task-search-terms.ts indexes it.
   */
  terms_indexed?: boolean;
  created_at: string;
  updated_at: string;
  created_by: string;
}

/** The index attributes that follow from a task's fields. */
export function taskIndexes(orgId: string, id: number, fields: TaskFields) {
  return {
    gsi1pk: taskKeys.byStatusPk(orgId, fields.status),
    gsi1sk: taskKeys.indexSort(fields.priority, id),
    gsi2pk: taskKeys.byAssigneePk(orgId, assigneeKey(fields.assignee)),
    gsi2sk: taskKeys.assigneeSort(fields.status, fields.priority, id),
  };
}

/** A task as both APIs show it: the item without keys, version and author, its product named by slug. */
export type Task = Omit<
  TaskItem,
  | 'pk'
  | 'sk'
  | 'gsi1pk'
  | 'gsi1sk'
  | 'gsi2pk'
  | 'gsi2sk'
  | 'version'
  | 'created_by'
  | 'product_slug'
  | 'last_run'
  | 'queued_at'
  | 'counted'
  | 'terms_indexed'
  | 'blocks'
> & { product: string | null; last_run: TaskRun | null };

export const toTask = (item: TaskItem): Task => ({
  id: item.id,
  title: item.title,
  description: item.description ?? null,
  status: item.status,
  priority: item.priority,
  assignee: item.assignee ?? null,
  product: item.product_slug ?? null,
  product_id: item.product_id ?? null,
  category: item.category ?? null,
  tags: item.tags ?? null,
  type: item.type ?? null,
  estimated_minutes: item.estimated_minutes ?? null,
  due_date: item.due_date ?? null,
  resolution: item.resolution ?? null,
  max_duration_seconds: item.max_duration_seconds ?? null,
  depends_on: [...(item.depends_on ?? [])].sort((a, b) => a - b),
  completed_at: item.completed_at ?? null,
  last_run: item.last_run ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
});

/** The public API's view: the same record, with `assigned_to` for assignee. */
export const toPublicTask = (task: Task) => ({ ...task, assigned_to: task.assignee });

/** The task is as the writer read it (`:version`): every write is conditional on the version it read. */
export const versionIs = 'version = :version';

/** An open-title guard held by task `:id`, or none at all: a release never takes another task's title. */
export const titleFreeOrHeldBy = 'attribute_not_exists(pk) OR task_id = :id';
