import { describe, expect, it } from 'vitest';
import { canMove, isOpen, TASK_STATUSES, TASK_TRANSITIONS, toTaskStatus } from '#lib/tasks/task-status';

describe('task transitions', () => {
  it('allows staying in any state', () => {
    for (const status of TASK_STATUSES) expect(canMove(status, status)).toBe(true);
  });

  it('finishes work only from in_progress or review', () => {
    const toDone = TASK_STATUSES.filter((from) => from !== 'done' && canMove(from, 'done'));
    expect(toDone).toEqual(['in_progress', 'review']);
  });

  it('reopens done and restores cancelled tasks', () => {
    expect(canMove('done', 'todo')).toBe(true);
    expect(canMove('cancelled', 'todo')).toBe(true);
    expect(canMove('cancelled', 'done')).toBe(false);
  });

  it('lets every state be reached from some other state', () => {
    for (const target of TASK_STATUSES) {
      expect(TASK_STATUSES.some((from) => from !== target && TASK_TRANSITIONS[from].includes(target))).toBe(true);
    }
  });

  it('reads archived as cancelled, and counts done and cancelled as closed', () => {
    expect(toTaskStatus('archived')).toBe('cancelled');
    expect(TASK_STATUSES.filter((status) => !isOpen(status))).toEqual(['done', 'cancelled']);
  });
});
