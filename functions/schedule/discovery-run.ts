import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { keys } from '#lib/app/keys';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { runner } from '#lib/app/runner';
import { scheduler } from '#lib/app/scheduler';
import type { RunOutcome } from '#lib/discovery/run-finish';
import { runScheduled } from '#lib/discovery/run-start';
import { requestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';

/** What an engine's schedule hands over (its EventBridge target input, or the local driver's payload). */
const ScheduleEvent = z.object({
  org_id: z.string().min(1).max(64),
  engine_id: z.number().int().positive(),
  slug: z.string().min(1).max(64),
});

/**
 * A discovery engine's scheduled run (EventBridge Scheduler, one schedule per engine; locally the table
 * scheduler's timers): writes the run and executes it in this invocation (lib/discovery/run-start.ts).
 * The scheduler port is wired so that the schedule of an engine that is gone removes itself. An event
 * of another shape is logged and dropped: the schedule would only send it again.
 */
export function discoveryRunHandler(spec: PortSpec = {}) {
  const ports = wirePorts({ keys, runner, scheduler, ...spec });
  return async (event: unknown): Promise<RunOutcome | { outcome: 'invalid_event' }> => {
    const parsed = ScheduleEvent.safeParse(event);
    if (!parsed.success) {
      logger.error('discovery run: the event is not { org_id, engine_id, slug }; dropped', {
        issues: parsed.error.issues,
      });
      return { outcome: 'invalid_event' };
    }
    const ctx = requestContext({ ports, traceId: randomUUID() });
    const outcome = await runScheduled(ctx, parsed.data);
    logger.info('discovery run', { orgId: parsed.data.org_id, slug: parsed.data.slug, ...outcome });
    return outcome;
  };
}

export const handler = discoveryRunHandler();
