import type { AgentItem, AgentNameItem, AgentStatus } from '#lib/agents/agent-keys';
import { agentKeys } from '#lib/agents/agent-keys';
import { type AutomationItem, type AutomationStatus, isTickAutomation } from '#lib/automations/automation-keys';
import { getMany } from '#lib/db/batch';

/**
 * How an automation is shown: the record, and its live status, read from what the service knows at
 * the moment of the request. The service runs only tick automations itself (through the agent's
 * schedule); any other automation runs on its agent's behalf, so whether it can run now is a question
 * of its own status and its agent's state:
 *
 * | live_status | when |
 * |---|---|
 * | `off` | the automation's own status is `inactive` or `disabled` |
 * | `agent_missing` | it is `active`, but no agent of its `agent_name` exists in the organization |
 * | `paused` | it is `active`, its agent is stopped or offline |
 * | `failing` | it is `active`, its agent's last run or schedule failed (agent status `error`) |
 * | `running` | it is `active`, its agent is at work now (agent status `active`) |
 * | `waiting` | it is `active`, its agent is idle between runs |
 *
 * Beside it: `agent_status` (the agent's stored status, null when missing), `agent_last_run_at`, and
 * for a tick `schedule_enabled` (its agent's schedule as the record keeps it; null for others).
 */
export const LIVE_STATUSES = ['off', 'agent_missing', 'paused', 'failing', 'running', 'waiting'] as const;
export type LiveStatus = (typeof LIVE_STATUSES)[number];

export interface Automation {
  id: number;
  name: string;
  agent_name: string;
  type: string;
  path: string;
  label: string | null;
  status: AutomationStatus;
  /** A tick follows its agent's schedule: it is changed by stopping and starting the agent, not here. */
  managed: boolean;
  live_status: LiveStatus;
  agent_status: AgentStatus | null;
  agent_last_run_at: string | null;
  schedule_enabled: boolean | null;
  created_at: string;
  updated_at: string;
}

const LIVE_BY_AGENT: Record<AgentStatus, LiveStatus> = {
  stopped: 'paused',
  offline: 'paused',
  error: 'failing',
  active: 'running',
  idle: 'waiting',
};

export function liveStatusOf(item: Pick<AutomationItem, 'status'>, agent: AgentItem | undefined): LiveStatus {
  if (item.status !== 'active') return 'off';
  if (!agent) return 'agent_missing';
  return LIVE_BY_AGENT[agent.status];
}

export function toAutomation(item: AutomationItem, agent: AgentItem | undefined): Automation {
  const tick = isTickAutomation(item);
  return {
    id: item.id,
    name: item.name,
    agent_name: item.agent_name,
    type: item.type,
    path: item.path,
    label: item.label ?? null,
    status: item.status,
    managed: tick,
    live_status: liveStatusOf(item, agent),
    agent_status: agent?.status ?? null,
    agent_last_run_at: agent?.last_run_at ?? null,
    schedule_enabled: tick ? (agent?.schedule?.enabled ?? false) : null,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

/**
 * The agents of the organization named `names`, by name: the name records, then the agents (two
 * BatchGetItem calls, whatever the number of automations shown).
 */
export async function agentsNamed(orgId: string, names: Iterable<string>): Promise<Map<string, AgentItem>> {
  const distinct = [...new Set(names)];
  if (distinct.length === 0) return new Map();
  const pointers = await getMany<AgentNameItem>(distinct.map((name) => agentKeys.byName(orgId, name)));
  const ids = pointers.flatMap((pointer) => (pointer ? [pointer.agent_id] : []));
  const agents = await getMany<AgentItem>(ids.map((id) => agentKeys.byId(orgId, id)));
  return new Map(agents.flatMap((agent) => (agent ? [[agent.name, agent] as const] : [])));
}

/** The automations shown with their agents' live state. */
export async function withLiveStatus(orgId: string, items: AutomationItem[]): Promise<Automation[]> {
  const agents = await agentsNamed(
    orgId,
    items.map((item) => item.agent_name),
  );
  return items.map((item) => toAutomation(item, agents.get(item.agent_name)));
}
