import type { Clock } from '#lib/kernel/ports';

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved; for tests of time-dependent rules. */
export function fixedClock(start: Date): Clock & { advance(ms: number): void; set(date: Date): void } {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance: (ms) => {
      current += ms;
    },
    set: (date) => {
      current = date.getTime();
    },
  };
}
