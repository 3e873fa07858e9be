import type { TableKey } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { isConditionFailed } from '#lib/errors';
import type { Scheduler, ScheduleSpec, ScheduleState, ScheduleTarget } from '#lib/kernel/ports';
import { logger } from '#lib/logger';

/**
 * The local scheduler adapter: schedules are kept in the table, so that they outlive a restart of
 * `npm start`, and run by timers in the process that connects the scheduler (the local runtime, see
 * infra/local/scheduler.ts). Intervals run as asked, to the second: there is no minute floor locally.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | schedule | `SCHEDULE` | `<name>` | `target`, `payload`, `interval_sec`, `enabled`, `anchor_at`, `updated_at` |
 *
 * One fixed partition for the whole instance: connecting reads it with one Query (paged), never a
 * Scan. Runs fall on `anchor_at + k × interval_sec` (k ≥ 1); `anchor_at` is set by each put and each
 * change of state, so a restart keeps the rhythm of a schedule instead of starting it over.
 *
 * Until `connect`, the calls only write the table (a function under test needs no timers); after it,
 * each call arms or disarms that schedule's timer at once. One process drives the schedules of a
 * table: the DATA_DIR lock keeps a second `npm start` off the same data. A schedule written by another
 * process (`npm run invoke`) is armed at the next start.
 */
export const SCHEDULE_PARTITION = 'SCHEDULE';

export const scheduleKey = (name: string, partition = SCHEDULE_PARTITION): TableKey => ({ pk: partition, sk: name });

export interface ScheduleItem extends TableKey {
  target: ScheduleTarget;
  payload: Record<string, unknown>;
  interval_sec: number;
  enabled: boolean;
  /** When the schedule's rhythm starts: runs fall on `anchor_at + k × interval_sec`. */
  anchor_at: string;
  updated_at: string;
}

/** A stored schedule as `list` answers it. */
export interface StoredSchedule extends ScheduleSpec {
  anchorAt: string;
  updatedAt: string;
}

/** Starts one run of a target: the target's function, called with the payload as its event. */
export type ScheduleDispatch = (target: ScheduleTarget, payload: Record<string, unknown>) => Promise<unknown>;

export interface TableSchedulerOptions {
  /** The partition the schedules live in (tests give each test its own); `SCHEDULE` by default. */
  partition?: string;
}

export interface TableScheduler extends Scheduler {
  /**
   * Reads every stored schedule and arms a timer for each enabled one; from then on, every call arms
   * or disarms at once. Answers how many schedules were armed.
   */
  connect(dispatch: ScheduleDispatch): Promise<number>;
  /** Every stored schedule, by name. */
  list(): Promise<StoredSchedule[]>;
  /** Stops every timer and disconnects (runs under way finish); the stored schedules stay. */
  close(): void;
}

/** EventBridge's own rule, kept locally so that a name that runs here also runs deployed. */
const SCHEDULE_NAME = /^[0-9A-Za-z._-]{1,64}$/;
/** Node's timers hold at most this many milliseconds; longer waits are taken in steps. */
const MAX_TIMER_MS = 2_147_483_647;

function check(spec: ScheduleSpec): void {
  if (!SCHEDULE_NAME.test(spec.name)) {
    throw new Error(`A schedule name is 1 to 64 of [0-9A-Za-z._-], not ${JSON.stringify(spec.name)}`);
  }
  if (!Number.isFinite(spec.intervalSec) || spec.intervalSec <= 0) {
    throw new Error(`A schedule's interval must be a positive number of seconds, not ${spec.intervalSec}`);
  }
}

const localRate = (intervalSec: number): string => `rate(${intervalSec} ${intervalSec === 1 ? 'second' : 'seconds'})`;

const toStored = (item: ScheduleItem): StoredSchedule => ({
  name: item.sk,
  target: item.target,
  payload: item.payload,
  intervalSec: item.interval_sec,
  enabled: item.enabled,
  anchorAt: item.anchor_at,
  updatedAt: item.updated_at,
});

export function tableScheduler(options: TableSchedulerOptions = {}): TableScheduler {
  const partition = options.partition ?? SCHEDULE_PARTITION;
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<string>();
  let dispatch: ScheduleDispatch | undefined;
  // Names written while `connect` reads the partition: the write armed them already, with newer data.
  let writtenDuringConnect: Set<string> | undefined;

  const readAll = async (): Promise<ScheduleItem[]> => {
    const items: ScheduleItem[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const result = await table.query({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      });
      items.push(...((result.Items ?? []) as ScheduleItem[]));
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return items;
  };

  const disarm = (name: string) => {
    clearTimeout(timers.get(name));
    timers.delete(name);
  };

  /** One run, unless the previous one is still going (the target then has the work in hand). */
  const run = async (item: ScheduleItem, send: ScheduleDispatch) => {
    const name = item.sk;
    if (running.has(name)) return;
    running.add(name);
    try {
      await send(item.target, item.payload);
    } catch (error) {
      logger.error('local schedule run failed; the schedule goes on', {
        schedule: name,
        target: item.target,
        error: error as Error,
      });
    } finally {
      running.delete(name);
    }
  };

  const arm = (item: ScheduleItem) => {
    const name = item.sk;
    disarm(name);
    writtenDuringConnect?.add(name);
    const send = dispatch;
    if (!send || !item.enabled) return;
    const everyMs = item.interval_sec * 1000;
    const anchor = Date.parse(item.anchor_at);
    // The first run due after `after`. Runs missed while the process slept are not made up for.
    const nextAfter = (after: number) => anchor + Math.max(1, Math.floor((after - anchor) / everyMs) + 1) * everyMs;
    // Chained timeouts on the anchor's grid rather than setInterval: no drift, and an interval longer
    // than a timer can hold is waited out in steps.
    const wait = (due: number) => {
      const delay = due - Date.now();
      const fire = () => {
        void run(item, send);
        wait(nextAfter(Math.max(due, Date.now())));
      };
      const timer = delay > MAX_TIMER_MS ? setTimeout(() => wait(due), MAX_TIMER_MS) : setTimeout(fire, delay);
      timers.set(name, timer);
    };
    wait(nextAfter(Date.now()));
  };

  return {
    kind: 'local',

    async put(spec): Promise<ScheduleState> {
      check(spec);
      const now = new Date().toISOString();
      const item: ScheduleItem = {
        ...scheduleKey(spec.name, partition),
        target: spec.target,
        payload: spec.payload,
        interval_sec: spec.intervalSec,
        enabled: spec.enabled,
        anchor_at: now,
        updated_at: now,
      };
      await table.put({ Item: item });
      arm(item);
      return { expression: localRate(spec.intervalSec), enabled: spec.enabled, intervalSec: spec.intervalSec };
    },

    async setEnabled(name, enabled) {
      const now = new Date().toISOString();
      try {
        const { Attributes } = await table.update({
          Key: scheduleKey(name, partition),
          UpdateExpression: 'SET enabled = :enabled, anchor_at = :now, updated_at = :now',
          // Unknown, or already in that state: nothing to do, and the rhythm of a running one is kept.
          ConditionExpression: 'attribute_exists(pk) AND enabled <> :enabled',
          ExpressionAttributeValues: { ':enabled': enabled, ':now': now },
          ReturnValues: 'ALL_NEW',
          reason: 'unchanged',
        });
        arm(Attributes as ScheduleItem);
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
      }
    },

    async remove(name) {
      await table.delete({ Key: scheduleKey(name, partition) });
      writtenDuringConnect?.add(name);
      disarm(name);
    },

    async connect(send) {
      if (dispatch) throw new Error('The local scheduler is already connected');
      dispatch = send;
      const written = new Set<string>();
      writtenDuringConnect = written;
      let items: ScheduleItem[];
      try {
        items = await readAll();
      } catch (error) {
        dispatch = undefined;
        throw error;
      } finally {
        writtenDuringConnect = undefined;
      }
      let armed = 0;
      for (const item of items) {
        if (written.has(item.sk) || !item.enabled) continue;
        arm(item);
        armed += 1;
      }
      return armed;
    },

    list: async () => (await readAll()).map(toStored),

    close() {
      dispatch = undefined;
      for (const name of [...timers.keys()]) disarm(name);
    },
  };
}

let shared: TableScheduler | undefined;

/**
 * The scheduler of this process (local mode): the HTTP functions write schedules through it, and the
 * local runtime connects it to the schedule targets of serverless.yml, so a schedule put under
 * `npm start` runs at once.
 */
export function localScheduler(): TableScheduler {
  shared ??= tableScheduler();
  return shared;
}
