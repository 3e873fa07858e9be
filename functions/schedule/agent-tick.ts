import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { runAgentTick, type TickOutcome } from '#lib/agents/agent-tick';
import { keys } from '#lib/app/keys';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { queue } from '#lib/app/queue';
import { runner } from '#lib/app/runner';
import { requestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';

/** What an agent's schedule hands over (its EventBridge target input, or the local driver's payload). */
const TickEvent = z.object({ org_id: z.string().min(1).max(64), agent_id: z.number().int().positive() });

/**
 * The agent tick (EventBridge Scheduler, one schedule per agent; locally the table scheduler's timers):
 * runs one cycle of the agent (lib/agents/agent-tick). An event of another shape is logged and
 * dropped: the schedule would only send it again.
 */
export function agentTickHandler(spec: PortSpec = {}) {
  const ports = wirePorts({ queue, keys, runner, ...spec });
  return async (event: unknown): Promise<TickOutcome | { outcome: 'invalid_event' }> => {
    const parsed = TickEvent.safeParse(event);
    if (!parsed.success) {
      logger.error('agent tick: the event is not { org_id, agent_id }; dropped', { issues: parsed.error.issues });
      return { outcome: 'invalid_event' };
    }
    const ctx = requestContext({ ports, traceId: randomUUID() });
    const outcome = await runAgentTick(ctx, parsed.data);
    logger.info('agent tick', { orgId: parsed.data.org_id, agentId: parsed.data.agent_id, ...outcome });
    return outcome;
  };
}

export const handler = agentTickHandler();
