import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ScheduledEvent } from 'aws-lambda';
import { readServerlessSchedules, type Schedule } from '#infra/local/serverless-routes';

/**
 * The local stand-in for EventBridge schedules: each `schedule: rate(…)` event of serverless.yml runs
 * its function in this process on that rate, with an EventBridge-shaped event. A run still going when
 * the next is due is not started twice; a run that fails is reported and the schedule goes on.
 */

export interface LocalSchedules {
  schedules: Schedule[];
  stop(): void;
}

type ScheduledHandler = (event: ScheduledEvent) => Promise<unknown>;

const scheduledEvent = (schedule: Schedule, at: Date): ScheduledEvent => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '000000000000',
  time: at.toISOString(),
  region: 'local',
  resources: [`local:schedule/${schedule.fn.name}`],
  detail: {},
});

export interface LocalSchedulesOptions {
  serverlessFile?: string;
  /**
   * Milliseconds between runs of the named functions, instead of their serverless.yml rate: a local
   * setting (PIPELINE_RECONCILE_INTERVAL_SEC), since EventBridge rates are a minute at least.
   */
  everyMsOf?: Partial<Record<string, number>>;
  /** Functions whose schedule is not run: the local runtime runs their work in its own way. */
  skip?: string[];
  onError?: (schedule: Schedule, error: unknown) => void;
}

export function startSchedules(options: LocalSchedulesOptions = {}): LocalSchedules {
  const schedules = readServerlessSchedules(options.serverlessFile)
    .filter((schedule) => !options.skip?.includes(schedule.fn.name))
    .map((schedule) => {
      const everyMs = options.everyMsOf?.[schedule.fn.name];
      return everyMs === undefined ? schedule : { ...schedule, everyMs };
    });
  const timers = schedules.map((schedule) => {
    let running = false;
    const run = async () => {
      if (running) return;
      running = true;
      try {
        const module = await import(pathToFileURL(resolve(`${schedule.fn.module}.ts`)).href);
        await (module[schedule.fn.exportName] as ScheduledHandler)(scheduledEvent(schedule, new Date()));
      } catch (error) {
        (options.onError ?? defaultOnError)(schedule, error);
      } finally {
        running = false;
      }
    };
    return setInterval(() => void run(), schedule.everyMs);
  });
  return {
    schedules,
    stop: () => {
      for (const timer of timers) clearInterval(timer);
    },
  };
}

const defaultOnError = (schedule: Schedule, error: unknown) =>
  console.error(`local schedule: ${schedule.fn.name} (${schedule.expression}) failed`, error);
