import type { Scheduler, ScheduleSpec, ScheduleState } from '#lib/kernel/ports';

/**
 * A Scheduler port that keeps its schedules in memory and records every call, for tests that assert
 * what the domain asked of the scheduler. It runs intervals as asked (`rate(N seconds)`), like the local
 * driver; with `roundUpTo`, it rounds intervals up to a multiple of that many seconds and says so in a
 * note, as EventBridge does with minutes. `failing` makes chosen operations throw, as an unavailable
 * scheduler would.
 */
export type SchedulerCall =
  | { op: 'put'; spec: ScheduleSpec }
  | { op: 'setEnabled'; name: string; enabled: boolean }
  | { op: 'remove'; name: string };

export interface RecordingScheduler extends Scheduler {
  readonly calls: SchedulerCall[];
  readonly schedules: Map<string, ScheduleState & { spec: ScheduleSpec }>;
  /** The calls made for one schedule, in order. */
  callsFor(name: string): SchedulerCall[];
}

export function recordingScheduler(
  options: { failing?: Array<SchedulerCall['op']>; message?: string; roundUpTo?: number } = {},
): RecordingScheduler {
  const calls: SchedulerCall[] = [];
  const schedules = new Map<string, ScheduleState & { spec: ScheduleSpec }>();
  const fail = (op: SchedulerCall['op']) => {
    if (options.failing?.includes(op)) throw new Error(options.message ?? `scheduler unavailable (${op})`);
  };
  return {
    kind: 'local',
    calls,
    schedules,
    callsFor: (name) => calls.filter((call) => (call.op === 'put' ? call.spec.name : call.name) === name),
    async put(spec) {
      calls.push({ op: 'put', spec: structuredClone(spec) });
      fail('put');
      const step = options.roundUpTo ?? 1;
      const intervalSec = Math.ceil(spec.intervalSec / step) * step;
      const state: ScheduleState = {
        expression: `rate(${intervalSec} ${intervalSec === 1 ? 'second' : 'seconds'})`,
        enabled: spec.enabled,
        intervalSec,
        ...(intervalSec !== spec.intervalSec
          ? { note: `interval_sec ${spec.intervalSec} rounded up to ${intervalSec}` }
          : {}),
      };
      schedules.set(spec.name, { ...state, spec });
      return state;
    },
    async setEnabled(name, enabled) {
      calls.push({ op: 'setEnabled', name, enabled });
      fail('setEnabled');
      const known = schedules.get(name);
      if (known) schedules.set(name, { ...known, enabled });
    },
    async remove(name) {
      calls.push({ op: 'remove', name });
      fail('remove');
      schedules.delete(name);
    },
  };
}
