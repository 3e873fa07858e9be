import { type AgentItem, type AgentSchedule, type AgentStatus, agentScheduleName } from '#lib/agents/agent-keys';
import { type AutomationItem, type AutomationStatus, isTickAutomation } from '#lib/automations/automation-keys';
import { tickStatusUpdate } from '#lib/automations/automation-records';
import type { TransactItem } from '#lib/db/transactions';
import type { RequestContext } from '#lib/kernel/context';
import type { ScheduleState } from '#lib/kernel/ports';

/**
 * An agent's schedule as the agents area asks the Scheduler port for it, and as the agent record keeps
 * it. The record is the authority: a tick of a stopped or offline agent skips its run whatever the
 * scheduler does, so the scheduler only saves the idle ticks of halted agents.
 */

/** Statuses in which the agent's schedule is disabled: set by stop (`stopped`) and the public delete (`offline`). */
const HALTED: ReadonlySet<AgentStatus> = new Set<AgentStatus>(['stopped', 'offline']);

export const isHalted = (status: AgentStatus): boolean => HALTED.has(status);

/** Creates or replaces the agent's schedule (every `interval_sec`, running `agent-tick` with the agent's ids). */
export async function putSchedule(
  ctx: RequestContext,
  orgId: string,
  agent: Pick<AgentItem, 'id'> & { interval_sec: number },
  enabled: boolean,
): Promise<ScheduleState> {
  return ctx.ports.scheduler.put({
    name: agentScheduleName(orgId, agent.id),
    target: 'agent-tick',
    payload: { org_id: orgId, agent_id: agent.id },
    intervalSec: agent.interval_sec,
    enabled,
  });
}

export async function setScheduleEnabled(
  ctx: RequestContext,
  orgId: string,
  agent: Pick<AgentItem, 'id'>,
  enabled: boolean,
): Promise<void> {
  await ctx.ports.scheduler.setEnabled(agentScheduleName(orgId, agent.id), enabled);
}

/** The schedule as the record keeps it: as the scheduler runs it, anchored at `anchorAt`. */
export const storedSchedule = (state: ScheduleState, anchorAt: string): AgentSchedule => ({
  expression: state.expression,
  enabled: state.enabled,
  interval_sec: state.intervalSec,
  anchor_at: anchorAt,
  note: state.note ?? null,
});

/** A scheduler's failure in one line, for a step's detail and `last_error` (adapters put no secrets in messages). */
export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0]?.trim() || 'unknown error';
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/** The tick automation runs exactly while the agent's schedule is enabled. */
export const automationStatusOf = (schedule: AgentSchedule | null): AutomationStatus =>
  schedule?.enabled ? 'active' : 'disabled';

/** The write that brings the agent's tick automation in line with its schedule, when it is not already. */
export function automationSync(
  orgId: string,
  agent: Pick<AgentItem, 'name' | 'schedule'>,
  automations: AutomationItem[],
  at: string,
): TransactItem[] {
  const status = automationStatusOf(agent.schedule);
  const tick = automations.find((automation) => automation.agent_name === agent.name && isTickAutomation(automation));
  if (!tick || tick.status === status) return [];
  return [tickStatusUpdate({ orgId, agentName: agent.name, status, at })];
}
