import type { Scheduler } from '#lib/kernel/ports';

/**
 * Schedules: EventBridge Scheduler in aws mode, the local driver otherwise. Not wired yet: every call
 * fails, which the agents area reports as a failed schedule step.
 */
export const scheduler = (): Scheduler => {
  const notWired = async (): Promise<never> => {
    throw new Error('The scheduler is not wired');
  };
  return { kind: 'local', put: notWired, setEnabled: notWired, remove: notWired };
};
