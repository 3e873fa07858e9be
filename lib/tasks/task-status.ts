/**
 * Task states and the transitions between them. The specification names the states but leaves the
 * transitions open; this table is the service's answer, published in the OpenAPI document.
 *
 * | from | allowed next states |
 * |---|---|
 * | todo | in_progress, blocked, cancelled |
 * | in_progress | todo, review, done, blocked, cancelled |
 * | review | in_progress, done, blocked, cancelled |
 * | blocked | todo, in_progress, cancelled |
 * | done | todo, in_progress (reopen) |
 * | cancelled | todo (restore) |
 *
 * Setting the state a task already has is allowed and changes nothing. `DELETE /v1/public/tasks/{id}`
 * cancels from any state. Work is finished through in_progress (or review): a `todo` task cannot jump to
 * `done`, so a completion always means somebody started the work.
 */
export const TASK_STATUSES = ['todo', 'in_progress', 'review', 'done', 'blocked', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** What create bodies and list filters accept: the record states, and `archived` meaning cancelled. */
export const TASK_STATUS_INPUTS = [...TASK_STATUSES, 'archived'] as const;
export type TaskStatusInput = (typeof TASK_STATUS_INPUTS)[number];

export const toTaskStatus = (input: TaskStatusInput): TaskStatus => (input === 'archived' ? 'cancelled' : input);

export const TASK_TRANSITIONS: Record<TaskStatus, readonly TaskStatus[]> = {
  todo: ['in_progress', 'blocked', 'cancelled'],
  in_progress: ['todo', 'review', 'done', 'blocked', 'cancelled'],
  review: ['in_progress', 'done', 'blocked', 'cancelled'],
  blocked: ['todo', 'in_progress', 'cancelled'],
  done: ['todo', 'in_progress'],
  cancelled: ['todo'],
};

export const canMove = (from: TaskStatus, to: TaskStatus): boolean =>
  from === to || TASK_TRANSITIONS[from].includes(to);

/** Open tasks hold their title in their product (the duplicate check) and count as unfinished work. */
export const isOpen = (status: TaskStatus): boolean => status !== 'done' && status !== 'cancelled';

export const TASK_PRIORITIES = ['P0', 'P1', 'P2', 'P3'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

/** The transition table as Markdown, for route descriptions. */
export const transitionTableMarkdown = (): string =>
  [
    '| from | allowed next states |',
    '|---|---|',
    ...TASK_STATUSES.map((from) => `| ${from} | ${TASK_TRANSITIONS[from].join(', ')} |`),
  ].join('\n');
