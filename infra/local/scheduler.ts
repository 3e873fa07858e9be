import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readServerlessFunctions, type ServerlessFunction } from '#infra/local/serverless-routes';
import { localScheduler, type ScheduleDispatch, type TableScheduler } from '#lib/adapters/local/table-scheduler';
import { SCHEDULE_TARGET_FUNCTIONS } from '#lib/app/schedule-targets';
import type { ScheduleTarget } from '#lib/kernel/ports';

/**
 * The local stand-in for EventBridge Scheduler's targets: connects the process's scheduler (the one
 * the HTTP functions write through) to the functions of serverless.yml, so a stored schedule runs its
 * target's handler in this process, with the schedule's payload as the event. A handler module is
 * imported at its first run.
 *
 * This module reads the table: import it only once the configuration is in place (infra/local/start.ts).
 */
type TargetHandler = (event: Record<string, unknown>) => Promise<unknown>;

export function scheduleDispatch(
  options: { serverlessFile?: string; onMissing?: (message: string) => void } = {},
): ScheduleDispatch {
  const functions = new Map(readServerlessFunctions(options.serverlessFile).map((fn) => [fn.name, fn]));
  const handlers = new Map<ScheduleTarget, Promise<TargetHandler>>();
  const reported = new Set<ScheduleTarget>();
  const onMissing = options.onMissing ?? ((message: string) => console.error(message));

  const load = async (fn: ServerlessFunction): Promise<TargetHandler> => {
    const module = await import(pathToFileURL(resolve(`${fn.module}.ts`)).href);
    const handler = module[fn.exportName];
    if (typeof handler !== 'function') throw new Error(`${fn.module}.ts exports no function ${fn.exportName}`);
    return handler as TargetHandler;
  };

  return async (target, payload) => {
    const name = SCHEDULE_TARGET_FUNCTIONS[target];
    const fn = functions.get(name);
    if (!fn) {
      // Said once per target, not at every run of every schedule.
      if (!reported.has(target)) {
        reported.add(target);
        onMissing(`Schedules of ${target} do not run: serverless.yml declares no function ${name}`);
      }
      return undefined;
    }
    let handler = handlers.get(target);
    if (!handler) {
      handler = load(fn);
      handlers.set(target, handler);
      // A module that failed to load is tried again at the next run (it may have been fixed meanwhile).
      handler.catch(() => handlers.delete(target));
    }
    return (await handler)(payload);
  };
}

/** Connects the process's scheduler to serverless.yml's functions; answers it and how many schedules run. */
export async function connectScheduler(serverlessFile?: string): Promise<{ scheduler: TableScheduler; armed: number }> {
  const scheduler = localScheduler();
  const armed = await scheduler.connect(scheduleDispatch({ serverlessFile }));
  return { scheduler, armed };
}
