import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ScheduleDispatch,
  type TableScheduler,
  type TableSchedulerOptions,
  tableScheduler,
} from '#lib/adapters/local/table-scheduler';
import { table } from '#lib/db/table';
import type { ScheduleSpec, ScheduleTarget } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { captureLogs } from '#tests/support/logs';

/**
 * The local scheduler against DynamoDB Local, with real timers: schedules live in the table, and a
 * connected scheduler runs them. Each test keeps its schedules in its own partition, so that connecting
 * arms only the test's own. Waits are for conditions; where a test must show that something does not
 * happen, it watches for a bounded window of a few intervals.
 */
const started: TableScheduler[] = [];

/** A scheduler over a partition of its own (or `partition`, to share one with another instance). */
function scheduler(options: TableSchedulerOptions = {}): TableScheduler {
  const instance = tableScheduler({ partition: `SCHEDULE#test-${randomUUID()}`, ...options });
  started.push(instance);
  return instance;
}

afterEach(() => {
  for (const instance of started.splice(0)) instance.close();
  vi.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

interface Run {
  target: ScheduleTarget;
  payload: Record<string, unknown>;
  at: number;
}

/** A dispatch that records each run, and whose runs take `work` (resolved at once by default). */
function recorder(work: () => Promise<unknown> = async () => undefined): { runs: Run[]; dispatch: ScheduleDispatch } {
  const runs: Run[] = [];
  return {
    runs,
    dispatch: async (target, payload) => {
      runs.push({ target, payload, at: Date.now() });
      return work();
    },
  };
}

const spec = (overrides: Partial<ScheduleSpec> = {}): ScheduleSpec => ({
  name: `agent-o_${randomUUID().slice(0, 8)}-1`,
  target: 'agent-tick',
  payload: { org_id: 'o_1', agent_id: 1 },
  intervalSec: 1,
  enabled: true,
  ...overrides,
});

/** Resolves once `condition` holds, polling; fails after `timeoutMs`. */
const until = (condition: () => boolean, timeoutMs = 8_000) =>
  vi.waitFor(
    () => {
      if (!condition()) throw new Error('not yet');
    },
    { timeout: timeoutMs, interval: 20 },
  );

/** Resolves when `condition` held throughout `windowMs`; fails as soon as it does not. */
async function holdsFor(condition: () => boolean, windowMs: number): Promise<void> {
  const end = Date.now() + windowMs;
  while (Date.now() < end) {
    expect(condition()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(condition()).toBe(true);
}

describe('tableScheduler', () => {
  it('stores a schedule in its partition and runs its interval as asked, to the second', async () => {
    // Prepare
    const partition = `SCHEDULE#test-${randomUUID()}`;
    const schedules = scheduler({ partition });
    const asked = spec({ intervalSec: 5, payload: { org_id: 'o_9', agent_id: 4 } });

    // Act
    const state = await schedules.put(asked);

    // Assess
    expect(state).toEqual({ expression: 'rate(5 seconds)', enabled: true, intervalSec: 5 });
    const { Item } = await table.get({ Key: { pk: partition, sk: asked.name }, ConsistentRead: true });
    expect(Item).toEqual({
      pk: partition,
      sk: asked.name,
      target: 'agent-tick',
      payload: { org_id: 'o_9', agent_id: 4 },
      interval_sec: 5,
      enabled: true,
      anchor_at: expect.any(String),
      updated_at: Item?.anchor_at,
    });
    expect(await schedules.list()).toEqual([{ ...asked, anchorAt: Item?.anchor_at, updatedAt: Item?.anchor_at }]);
  });

  it('answers rate(1 second) for one second', async () => {
    expect((await scheduler().put(spec({ intervalSec: 1 }))).expression).toBe('rate(1 second)');
  });

  it('refuses a name EventBridge would refuse, and an interval that is not a positive number', async () => {
    // Prepare
    const schedules = scheduler();

    // Act / Assess
    await expect(schedules.put(spec({ name: 'agent o/1' }))).rejects.toThrow('[0-9A-Za-z._-]');
    await expect(schedules.put(spec({ name: 'a'.repeat(65) }))).rejects.toThrow('1 to 64');
    await expect(schedules.put(spec({ intervalSec: 0 }))).rejects.toThrow('positive number of seconds');
    expect(await schedules.list()).toEqual([]);
  });

  it('once connected, runs a schedule put afterwards with its payload, every interval', async () => {
    // Prepare
    const schedules = scheduler();
    const { runs, dispatch } = recorder();
    await schedules.connect(dispatch);
    const asked = spec({ intervalSec: 1, payload: { org_id: 'o_2', agent_id: 3 } });

    // Act
    const putAt = Date.now();
    await schedules.put(asked);
    await until(() => runs.length >= 2);

    // Assess
    expect(runs.slice(0, 2).map(({ target, payload }) => ({ target, payload }))).toEqual([
      { target: 'agent-tick', payload: { org_id: 'o_2', agent_id: 3 } },
      { target: 'agent-tick', payload: { org_id: 'o_2', agent_id: 3 } },
    ]);
    // Timers never fire early: the first run is an interval after the put, the next two intervals after
    // it (a fixed rate, as EventBridge's: a first run late on a busy machine does not push the second).
    expect((runs[0] as Run).at - putAt).toBeGreaterThanOrEqual(950);
    expect((runs[1] as Run).at - putAt).toBeGreaterThanOrEqual(1950);
  });

  it('stops running a disabled schedule, and starts again when it is enabled', async () => {
    // Prepare
    const partition = `SCHEDULE#test-${randomUUID()}`;
    const schedules = scheduler({ partition });
    const { runs, dispatch } = recorder();
    await schedules.connect(dispatch);
    const asked = spec({ intervalSec: 1 });
    await schedules.put(asked);
    await until(() => runs.length >= 1);

    // Act
    await schedules.setEnabled(asked.name, false);
    const whenDisabled = runs.length;

    // Assess
    await holdsFor(() => runs.length === whenDisabled, 2_500);
    const { Item } = await table.get({ Key: { pk: partition, sk: asked.name }, ConsistentRead: true });
    expect(Item?.enabled).toBe(false);

    // Act
    await schedules.setEnabled(asked.name, true);

    // Assess
    await until(() => runs.length > whenDisabled);
  });

  it('keeps the rhythm of a schedule that is enabled again while already enabled', async () => {
    // Prepare
    const schedules = scheduler();
    const asked = spec();
    await schedules.put(asked);
    const [before] = await schedules.list();

    // Act
    await schedules.setEnabled(asked.name, true);

    // Assess
    expect(await schedules.list()).toEqual([before]);
  });

  it('does nothing when enabling, disabling or removing a schedule that does not exist', async () => {
    // Prepare
    const schedules = scheduler();
    await schedules.connect(recorder().dispatch);

    // Act / Assess
    await expect(schedules.setEnabled('agent-o_none-1', true)).resolves.toBeUndefined();
    await expect(schedules.setEnabled('agent-o_none-1', false)).resolves.toBeUndefined();
    await expect(schedules.remove('agent-o_none-1')).resolves.toBeUndefined();
    expect(await schedules.list()).toEqual([]);
  });

  it('removes a schedule from the table and stops running it', async () => {
    // Prepare
    const partition = `SCHEDULE#test-${randomUUID()}`;
    const schedules = scheduler({ partition });
    const { runs, dispatch } = recorder();
    await schedules.connect(dispatch);
    const asked = spec({ intervalSec: 1 });
    await schedules.put(asked);
    await until(() => runs.length >= 1);

    // Act
    await schedules.remove(asked.name);
    const whenRemoved = runs.length;

    // Assess
    const { Item } = await table.get({ Key: { pk: partition, sk: asked.name }, ConsistentRead: true });
    expect(Item).toBeUndefined();
    await holdsFor(() => runs.length === whenRemoved, 2_500);
  });

  it('runs the new payload and interval of a schedule put again', async () => {
    // Prepare
    const schedules = scheduler();
    const { runs, dispatch } = recorder();
    await schedules.connect(dispatch);
    const asked = spec({ intervalSec: 30, payload: { org_id: 'o_1', agent_id: 1 } });
    await schedules.put(asked);

    // Act
    await schedules.put({ ...asked, intervalSec: 0.2, payload: { org_id: 'o_1', agent_id: 2 } });

    // Assess
    await until(() => runs.length >= 2);
    expect(runs.map((run) => run.payload)).toContainEqual({ org_id: 'o_1', agent_id: 2 });
    expect(runs.map((run) => run.payload)).not.toContainEqual({ org_id: 'o_1', agent_id: 1 });
  });

  it('after a restart, a new instance on the same table runs the stored enabled schedules', async () => {
    // Prepare
    const partition = `SCHEDULE#test-${randomUUID()}`;
    const before = scheduler({ partition });
    const first = recorder();
    await before.connect(first.dispatch);
    const running = spec({ intervalSec: 1, payload: { org_id: 'o_5', agent_id: 1 } });
    const paused = spec({ intervalSec: 1, payload: { org_id: 'o_5', agent_id: 2 }, enabled: false });
    await before.put(running);
    await before.put(paused);
    before.close();
    const after = scheduler({ partition });
    const second = recorder();

    // Act
    const armed = await after.connect(second.dispatch);

    // Assess
    expect(armed).toBe(1);
    await until(() => second.runs.length >= 2);
    expect(new Set(second.runs.map((run) => run.payload.agent_id))).toEqual(new Set([1]));
    expect(first.runs).toEqual([]);
  });

  it('skips a run while the previous one of the same schedule is still going', async () => {
    // Prepare
    const schedules = scheduler();
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { runs, dispatch } = recorder(() => (runs.length === 1 ? blocked : Promise.resolve()));
    await schedules.connect(dispatch);
    await schedules.put(spec({ intervalSec: 0.2 }));
    await until(() => runs.length === 1);

    // Act / Assess: five intervals pass while the first run is held.
    await holdsFor(() => runs.length === 1, 1_000);
    release();
    await until(() => runs.length >= 2);
  });

  it('logs a failing run in one line and goes on with the schedule', async () => {
    // Prepare
    const lines = captureLogs('ERROR');
    const schedules = scheduler();
    const { runs, dispatch } = recorder(async () => {
      throw new Error('tick failed');
    });
    await schedules.connect(dispatch);
    const asked = spec({ intervalSec: 0.2 });

    // Act
    await schedules.put(asked);
    await until(() => runs.length >= 2);

    // Assess
    const failures = lines.filter((line) => line.includes('local schedule run failed'));
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures[0]?.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(failures[0] as string)).toMatchObject({
      level: 'ERROR',
      schedule: asked.name,
      target: 'agent-tick',
      error: { message: 'tick failed' },
    });
  });

  it('refuses to connect twice, and connects again after close', async () => {
    // Prepare
    const schedules = scheduler();
    await schedules.connect(recorder().dispatch);

    // Act / Assess
    await expect(schedules.connect(recorder().dispatch)).rejects.toThrow('already connected');
    schedules.close();
    await expect(schedules.connect(recorder().dispatch)).resolves.toBe(0);
  });
});
