import { latestEntries } from '#lib/activity/activity-queries';
import { listAgentItems } from '#lib/agents/agent-records';
import { AGENT_STATUSES } from '#lib/agents/agent-status';
import { requirePrincipal } from '#lib/identity/access';
import { listIntegrations } from '#lib/integrations/integrations';
import type { RequestContext } from '#lib/kernel/context';
import { dayOf, ORG_DAY } from '#lib/metrics/metric-keys';
import { readInstanceTotals, readOrgDays, readOrgTotals } from '#lib/metrics/metric-records';
import { EXECUTION_STATUSES } from '#lib/pipelines/execution-keys';
import { TASK_STATUSES } from '#lib/tasks/task-status';
import { getBalance } from '#lib/tokens/ledger';
import { WEBHOOK_EVENTS } from '#lib/webhooks/outbound/event-types';
import { targetsOf } from '#lib/webhooks/outbound/tenant-config-keys';
import { getTenantConfigItem } from '#lib/webhooks/outbound/tenant-config-records';

/**
 * The dashboards. Each answers from counters kept on write (lib/metrics) and from lists bounded by
 * design (an organization's agents, its integrations), so a request costs a handful of DynamoDB reads
 * whatever the organization's size: bench/dashboards.ts counts them.
 */

/** The sub-endpoints GET /dashboard lists; each needs a credential and shows the caller's organization. */
export const DASHBOARD_ENDPOINTS = [
  { path: '/dashboard/stats', summary: 'Tasks, agents and executions by status; products, pipelines, tokens used' },
  { path: '/dashboard/overview', summary: 'Token balance, recent agent runs, protocols and 7-day usage' },
  { path: '/dashboard/agent-efficiency', summary: 'Agents by completed tasks per 1,000 tokens' },
  { path: '/dashboard/agent-queue-health', summary: 'Queued tasks and their wait times per agent' },
] as const;

/**
 * GET /dashboard (no credential): the instance's totals and the sub-endpoints. The totals are the
 * instance counters alone (one Query of their partition): numbers of the whole instance, never a name,
 * an id or a number of one organization.
 */
export async function instanceDashboard(ctx: RequestContext) {
  const totals = await readInstanceTotals();
  return {
    generated_at: ctx.ports.clock.now().toISOString(),
    totals,
    endpoints: DASHBOARD_ENDPOINTS.map((endpoint) => ({ ...endpoint, auth: 'bearer' as const })),
  };
}

/** Counts of a set of states from counters named `<prefix><state>`; a counter never written is 0. */
function byState<const S extends string>(totals: Record<string, number>, prefix: string, states: readonly S[]) {
  const counts = Object.fromEntries(states.map((state) => [state, Math.max(0, totals[`${prefix}${state}`] ?? 0)]));
  return counts as Record<S, number>;
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((total, count) => total + count, 0);

/**
 * GET /dashboard/stats: the organization's aggregate counts. Tasks, executions, products, pipelines,
 * tokens and runs from the organization's counters (one Query); agents by status from its agents (tens,
 * not thousands: one Query; lib/dashboard/agent-dashboards.ts).
 */
export async function dashboardStats(ctx: RequestContext) {
  const orgId = requirePrincipal(ctx).orgId;
  const [totals, agents] = await Promise.all([readOrgTotals(orgId), listAgentItems(orgId)]);
  const tasks = byState(totals, 'tasks_', TASK_STATUSES);
  const executions = byState(totals, 'executions_', EXECUTION_STATUSES);
  const agentsByStatus = Object.fromEntries(AGENT_STATUSES.map((status) => [status, 0])) as Record<
    (typeof AGENT_STATUSES)[number],
    number
  >;
  for (const agent of agents) agentsByStatus[agent.status] = (agentsByStatus[agent.status] ?? 0) + 1;
  return {
    generated_at: ctx.ports.clock.now().toISOString(),
    tasks: { total: sum(tasks), by_status: tasks },
    agents: { total: agents.length, by_status: agentsByStatus },
    products: Math.max(0, totals.products ?? 0),
    pipelines: Math.max(0, totals.pipelines ?? 0),
    executions: { total: sum(executions), by_status: executions },
    agent_runs: {
      succeeded: totals.agent_runs_succeeded ?? 0,
      failed: totals.agent_runs_failed ?? 0,
    },
    tokens_used: totals.tokens_used ?? 0,
  };
}

/** The run actions the activity log records for agents (lib/agents/run-results.ts, agent-tick.ts). */
const RUN_OUTCOMES: Record<string, string> = {
  'task.run_succeeded': 'succeeded',
  'task.run_failed': 'failed',
  'task.run_discarded': 'discarded',
  'task.run_interrupted': 'interrupted',
};
const RECENT_RUNS = 10;

/** The wire protocol behind each integration of the catalogue (lib/integrations/catalogue.ts). */
const PROTOCOLS: Record<string, string> = {
  git: 'HTTPS API; push webhooks signed with HMAC-SHA256 (X-Hub-Signature-256)',
  payments: 'HTTPS API; webhooks signed by the payments provider',
  deploy: 'HTTPS API; deployment webhooks signed with HMAC-SHA256 (X-Webhook-Signature v1)',
  chat: 'Bot API; message webhooks signed with HMAC-SHA256 (X-Webhook-Signature v1)',
  llm: 'OpenAI-compatible chat completions over HTTPS',
  email: 'Email (SES on AWS, an outbox locally)',
};

/**
 * The organization's protocols: how its work connects to the outside. One per integration of the
 * catalogue (its status as GET /integrations shows it, and the protocol spoken), and the outbound
 * webhooks (Standard Webhooks) with the events that have a URL. Never a value, a URL or a secret.
 */
async function protocolsOf(ctx: RequestContext, orgId: string) {
  const [integrations, config] = await Promise.all([listIntegrations(ctx), getTenantConfigItem(orgId)]);
  const targets = targetsOf(config);
  const events = WEBHOOK_EVENTS.filter((event) => targets[event] !== null);
  return [
    ...integrations.map((integration) => ({
      id: integration.id,
      name: integration.name,
      category: integration.category,
      protocol: PROTOCOLS[integration.id] ?? 'HTTPS',
      status: integration.status,
      events: [] as string[],
    })),
    {
      id: 'outbound_webhooks',
      name: 'Outbound webhooks',
      category: 'webhooks',
      protocol: 'Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature v1 HMAC-SHA256)',
      status: events.length > 0 ? ('configured' as const) : ('not_configured' as const),
      events: [...events],
    },
  ];
}

/**
 * GET /dashboard/overview: the token balance (one read), the last agent runs (from the activity log's
 * action index: one Query per run outcome, RECENT_RUNS long), the protocols (the credential names and
 * the tenant configuration: two reads) and the usage of the last 7 days, today included (the day
 * counters: one Query).
 */
export async function dashboardOverview(ctx: RequestContext) {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  const days = Array.from({ length: 7 }, (_, back) => dayOf(new Date(now.getTime() - (6 - back) * 86_400_000)));
  const [balance, runs, protocols, usage] = await Promise.all([
    getBalance(orgId),
    latestEntries(orgId, 'agent', Object.keys(RUN_OUTCOMES), RECENT_RUNS, now),
    protocolsOf(ctx, orgId),
    readOrgDays(orgId, days[0] as string, days[6] as string),
  ]);
  return {
    generated_at: now.toISOString(),
    token_balance: balance.balance,
    recent_runs: runs.map((entry) => ({
      agent: entry.actor_id.replace(/^agent:/, ''),
      task_id: entry.entity_id === null ? null : Number(entry.entity_id),
      outcome: RUN_OUTCOMES[entry.action] ?? entry.action,
      tokens: typeof entry.metadata.tokens === 'number' ? entry.metadata.tokens : null,
      model: typeof entry.metadata.model === 'string' ? entry.metadata.model : null,
      error: typeof entry.metadata.error === 'string' ? entry.metadata.error : null,
      at: entry.created_at,
    })),
    protocols,
    usage_7d: days.map((day) => ({
      date: day,
      ...(Object.fromEntries(ORG_DAY.map((counter) => [counter, usage.get(day)?.[counter] ?? 0])) as Record<
        (typeof ORG_DAY)[number],
        number
      >),
    })),
  };
}
