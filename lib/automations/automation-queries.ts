import type { AutomationItem, AutomationStatus } from '#lib/automations/automation-keys';
import { allAutomations, automationsOfAgent, getAutomationById } from '#lib/automations/automation-records';
import { type Automation, withLiveStatus } from '#lib/automations/automation-view';
import type { Page, PageRequest } from '#lib/db/paging';
import { NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/** Reading automations: GET /automations and GET /automations/{id}. */

export const automationNotFound = () => new NotFoundError('Automation not found');

export interface AutomationFilter {
  agentName?: string | undefined;
  type?: string | undefined;
  statuses?: AutomationStatus[] | undefined;
  q?: string | undefined;
}

function keeps(filter: AutomationFilter) {
  const q = filter.q?.trim().toLowerCase();
  const type = filter.type?.toLowerCase();
  return (item: AutomationItem): boolean =>
    (type === undefined || item.type.toLowerCase() === type) &&
    (filter.statuses === undefined || filter.statuses.includes(item.status)) &&
    (!q ||
      [item.name, item.label, item.path, item.agent_name, item.type].some((text) => text?.toLowerCase().includes(q)));
}

/**
 * GET /automations, oldest first. `agent_name` reads that agent's automations only (one Query of its
 * key range); otherwise the organization's automations are read in one Query (an organization has a
 * few per agent, and tens of agents). The page's agents are then read in two batch calls for the
 * live status.
 */
export async function listAutomations(
  ctx: RequestContext,
  filter: AutomationFilter,
  page: PageRequest,
): Promise<Page<Automation>> {
  const { orgId } = requirePrincipal(ctx);
  const read = filter.agentName ? await automationsOfAgent(orgId, filter.agentName) : await allAutomations(orgId);
  const found = read.filter(keeps(filter));
  const window = found.slice(page.offset, page.offset + page.limit);
  return { items: await withLiveStatus(orgId, window), total: found.length };
}

/** The automation `id` of the caller's organization, or 404. */
export async function requireAutomation(orgId: string, id: number): Promise<AutomationItem> {
  const item = await getAutomationById(orgId, id);
  if (!item) throw automationNotFound();
  return item;
}

/** GET /automations/{id}. */
export async function getAutomation(ctx: RequestContext, id: number): Promise<Automation> {
  const { orgId } = requirePrincipal(ctx);
  const [shown] = await withLiveStatus(orgId, [await requireAutomation(orgId, id)]);
  return shown as Automation;
}
