import { describe, expect, it, vi } from 'vitest';
import { deferred } from '#lib/app/deferred';
import type { Scheduler, ScheduleSpec } from '#lib/kernel/ports';

const spec: ScheduleSpec = {
  name: 'agent-7',
  target: 'agent-tick',
  payload: { agentId: '7' },
  intervalSec: 300,
  enabled: true,
};

/** A scheduler that records its calls, as the adapter module a deferred port imports would build. */
function recordingScheduler(calls: string[]): Scheduler {
  return {
    kind: 'eventbridge',
    async put(schedule) {
      calls.push(`put ${schedule.name}`);
      return { expression: 'rate(5 minutes)', enabled: schedule.enabled, intervalSec: schedule.intervalSec };
    },
    async setEnabled(name, enabled) {
      calls.push(`setEnabled ${name} ${enabled}`);
    },
    async remove(name) {
      calls.push(`remove ${name}`);
    },
  };
}

describe('deferred, a port whose adapter is imported at its first call', () => {
  it('loads nothing until a method is called, then loads once and answers as the adapter', async () => {
    // Prepare
    const calls: string[] = [];
    const load = vi.fn(async () => recordingScheduler(calls));
    const scheduler = deferred(load, ['put', 'setEnabled', 'remove'], { kind: 'eventbridge' });

    // Act
    const kind = scheduler.kind;
    const loadsBeforeUse = load.mock.calls.length;
    const [state] = await Promise.all([scheduler.put(spec), scheduler.setEnabled('agent-7', false)]);
    await scheduler.remove('agent-7');

    // Assess
    expect(kind).toBe('eventbridge');
    expect(loadsBeforeUse).toBe(0);
    expect(load).toHaveBeenCalledTimes(1);
    expect(state).toEqual({ expression: 'rate(5 minutes)', enabled: true, intervalSec: 300 });
    expect(calls).toEqual(['put agent-7', 'setEnabled agent-7 false', 'remove agent-7']);
  });

  it('tries the import again at the next call after one failed', async () => {
    // Prepare
    const calls: string[] = [];
    const load = vi
      .fn<() => Promise<Scheduler>>()
      .mockRejectedValueOnce(new Error('chunk not found'))
      .mockImplementation(async () => recordingScheduler(calls));
    const scheduler = deferred(load, ['put', 'setEnabled', 'remove'], { kind: 'eventbridge' });

    // Act
    const first = scheduler.remove('agent-7');
    await expect(first).rejects.toThrow('chunk not found');
    await scheduler.remove('agent-7');

    // Assess
    expect(load).toHaveBeenCalledTimes(2);
    expect(calls).toEqual(['remove agent-7']);
  });

  it('passes an adapter method’s failure to the caller and keeps the loaded adapter', async () => {
    // Prepare
    const load = vi.fn(
      async (): Promise<Scheduler> => ({
        ...recordingScheduler([]),
        remove: async () => {
          throw new Error('ResourceNotFoundException');
        },
      }),
    );
    const scheduler = deferred(load, ['put', 'setEnabled', 'remove'], { kind: 'eventbridge' });

    // Act / Assess
    await expect(scheduler.remove('agent-7')).rejects.toThrow('ResourceNotFoundException');
    await expect(scheduler.setEnabled('agent-7', true)).resolves.toBeUndefined();
    expect(load).toHaveBeenCalledTimes(1);
  });
});
