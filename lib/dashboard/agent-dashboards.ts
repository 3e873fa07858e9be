import type { AgentItem, AgentStatus } from '#lib/agents/agent-keys';
import { listAgentItems } from '#lib/agents/agent-records';
import { table } from '#lib/db/table';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { ORG_SHARDS } from '#lib/metrics/metric-keys';
import { taskKeys, UNASSIGNED } from '#lib/tasks/task-keys';

/**
 * The per-agent dashboards. Both read the organization's agents: tens, not thousands (the tiers allow
 * 3, 25 or 100 and enterprise any number; the limits are held when a plan changes, not when an agent is
 * created), one Query per megabyte of them, so these answers grow with the agents and never with the
 * tasks or runs: efficiency comes from the counters each run keeps on its agent, queue health from
 * each agent's queue partition (lib/tasks/task-metrics.ts), one Query per agent.
 */

export interface AgentEfficiency {
  id: number;
  name: string;
  status: AgentStatus;
  tasks_completed: number;
  tasks_failed: number;
  tokens_used: number;
  /** Completed tasks per 1,000 tokens; null before the agent used any tokens. */
  tasks_per_1k_tokens: number | null;
}

const efficiencyOf = (agent: AgentItem): AgentEfficiency => {
  const completed = agent.tasks_completed ?? 0;
  const tokens = agent.tokens_used ?? 0;
  return {
    id: agent.id,
    name: agent.name,
    status: agent.status,
    tasks_completed: completed,
    tasks_failed: agent.tasks_failed ?? 0,
    tokens_used: tokens,
    tasks_per_1k_tokens: tokens > 0 ? Math.round((completed * 1000 * 1000) / tokens) / 1000 : null,
  };
};

/** GET /dashboard/agent-efficiency: the most completed tasks per 1,000 tokens first; agents without tokens last. */
export async function agentEfficiency(ctx: RequestContext): Promise<{ agents: AgentEfficiency[] }> {
  const agents = (await listAgentItems(requirePrincipal(ctx).orgId)).map(efficiencyOf);
  agents.sort(
    (a, b) =>
      (b.tasks_per_1k_tokens ?? -1) - (a.tasks_per_1k_tokens ?? -1) ||
      b.tasks_completed - a.tasks_completed ||
      a.name.localeCompare(b.name),
  );
  return { agents };
}

export interface QueueHealth {
  queued: number;
  oldest_task_id: number | null;
  oldest_wait_seconds: number | null;
  average_wait_seconds: number | null;
}

/**
 * One queue's health from one Query: its count shards (`COUNT#…`) sort before its entries
 * (`TASK#<queued_at>#…`), so the first ORG_SHARDS + 1 items hold every shard and the oldest entry.
 */
async function queueHealth(orgId: string, assignee: string, nowSeconds: number): Promise<QueueHealth> {
  const { Items = [] } = await table.query({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': taskKeys.queuePk(orgId, assignee) },
    Limit: ORG_SHARDS + 1,
  });
  let count = 0;
  let sinceSum = 0;
  for (const item of Items.filter((found) => String(found.sk).startsWith('COUNT#'))) {
    count += Number(item.count ?? 0);
    sinceSum += Number(item.since_sum ?? 0);
  }
  const oldest = Items.find((found) => String(found.sk).startsWith('TASK#'));
  if (count <= 0 || !oldest) {
    return { queued: 0, oldest_task_id: null, oldest_wait_seconds: null, average_wait_seconds: null };
  }
  const oldestSince = Math.floor(new Date(String(oldest.queued_at)).getTime() / 1000);
  return {
    queued: count,
    oldest_task_id: Number(oldest.task_id),
    oldest_wait_seconds: Math.max(0, nowSeconds - oldestSince),
    average_wait_seconds: Math.max(0, Math.round(nowSeconds - sinceSum / count)),
  };
}

/**
 * GET /dashboard/agent-queue-health: per agent, its todo tasks (assigned to it) and how long they have
 * waited since they became todo; the most queued first. `unassigned` is the queue of todo tasks without
 * an assignee, which agents with `config.take_unassigned` also take.
 */
export async function agentQueueHealth(ctx: RequestContext) {
  const orgId = requirePrincipal(ctx).orgId;
  const nowSeconds = Math.floor(ctx.ports.clock.now().getTime() / 1000);
  const [agents, unassigned] = await Promise.all([listAgentItems(orgId), queueHealth(orgId, UNASSIGNED, nowSeconds)]);
  const rows = await Promise.all(
    agents.map(async (agent) => ({
      id: agent.id,
      name: agent.name,
      status: agent.status,
      ...(await queueHealth(orgId, agent.name, nowSeconds)),
    })),
  );
  rows.sort(
    (a, b) =>
      b.queued - a.queued ||
      (b.oldest_wait_seconds ?? -1) - (a.oldest_wait_seconds ?? -1) ||
      a.name.localeCompare(b.name),
  );
  return { generated_at: ctx.ports.clock.now().toISOString(), agents: rows, unassigned };
}
