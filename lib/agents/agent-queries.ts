import { agentNotFound } from '#lib/agents/agent-control';
import type { AgentItem, AgentStatus } from '#lib/agents/agent-keys';
import { getAgentById, listAgentItems } from '#lib/agents/agent-records';
import { type AgentView, toAgentView } from '#lib/agents/agent-view';
import { allAutomations } from '#lib/automations/automation-records';
import type { Page, PageRequest } from '#lib/db/paging';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/** Reading agents: GET /agents, GET /v1/public/agents and GET /v1/public/agents/{id}. */

export interface AgentFilter {
  /** Stored statuses; empty or absent filters nothing. */
  statuses?: AgentStatus[] | undefined;
  /** Exact role, ignoring case. */
  role?: string | undefined;
}

/** The organization's agents that pass the filter, oldest first, and how many there are. */
export async function findAgents(
  ctx: RequestContext,
  filter: AgentFilter,
  page: PageRequest,
): Promise<Page<AgentItem>> {
  const principal = requirePrincipal(ctx);
  const statuses = filter.statuses?.length ? new Set(filter.statuses) : undefined;
  const role = filter.role?.trim().toLowerCase() || undefined;
  const found = (await listAgentItems(principal.orgId))
    .sort((a, b) => a.id - b.id)
    .filter((item) => (!statuses || statuses.has(item.status)) && (!role || item.role?.toLowerCase() === role));
  return { items: found.slice(page.offset, page.offset + page.limit), total: found.length };
}

/** GET /agents: each agent of the page with its schedule, automations (one Query for all) and figures. */
export async function listAgents(
  ctx: RequestContext,
  filter: AgentFilter,
  page: PageRequest,
): Promise<Page<AgentView>> {
  const principal = requirePrincipal(ctx);
  // Side by side: a page without agents has read the automations for nothing, one Query.
  const [found, automations] = await Promise.all([findAgents(ctx, filter, page), allAutomations(principal.orgId)]);
  const now = ctx.ports.clock.now();
  return { items: found.items.map((item) => toAgentView(item, automations, now)), total: found.total };
}

export async function getAgent(ctx: RequestContext, id: number): Promise<AgentItem> {
  const principal = requirePrincipal(ctx);
  const item = await getAgentById({ orgId: principal.orgId, id, consistent: true });
  if (!item) throw agentNotFound();
  return item;
}
