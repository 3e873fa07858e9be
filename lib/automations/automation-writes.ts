import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { agentKeys } from '#lib/agents/agent-keys';
import { getAgentByName } from '#lib/agents/agent-records';
import {
  type AutomationItem,
  type AutomationStatus,
  automationKeys,
  isTickAutomation,
} from '#lib/automations/automation-keys';
import { requireAutomation } from '#lib/automations/automation-queries';
import {
  automationDeleteWrites,
  automationReplaceWrites,
  newAutomationWrites,
  nextAutomationId,
} from '#lib/automations/automation-records';
import { type Automation, agentsNamed, toAutomation } from '#lib/automations/automation-view';
import { itemExists } from '#lib/db/conditions';
import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, ValidationError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';

/**
 * Creating, changing and deleting automations: POST, PATCH and DELETE /automations. Each write lands in
 * one transaction with its activity entry and a check that the automation's agent exists. Changes and
 * deletes hold only on the version read; when another write landed in between, the automation is read
 * again and the change applied to what is there now, a few times, before the caller hears 409.
 */

export interface NewAutomation {
  name: string;
  agent_name: string;
  type: string;
  path: string;
  label?: string | null | undefined;
  status?: AutomationStatus | undefined;
}

export type AutomationChanges = Partial<NewAutomation>;

const WRITE_ATTEMPTS = 3;

const noSuchAgent = () =>
  new ValidationError('The automation names an agent the organization does not have', [
    { path: 'agent_name', message: 'no agent of this name in the organization' },
  ]);

const managed = (item: AutomationItem) =>
  new ConflictError(
    `Automation ${item.id} is the tick of agent ${item.agent_name}: it follows the agent's schedule; ` +
      `stop or start the agent instead (POST /agents/${item.agent_name}/stop or /start)`,
    [{ path: 'id', message: 'is a tick automation, managed by its agent' }],
  );

/** The agent's name record still exists (agents are never removed; this guards a record written meanwhile). */
const agentExists = (orgId: string, agentName: string): TransactItem => ({
  ConditionCheck: { Key: agentKeys.byName(orgId, agentName), ConditionExpression: itemExists },
  reason: 'agent-gone',
});

const conflicts = { 'agent-gone': noSuchAgent };

const activity = (principal: Principal, action: string, id: number, metadata: Record<string, unknown>) => ({
  ...activityActor(principal),
  action,
  entity_type: 'automation',
  entity_id: String(id),
  metadata,
});

/** POST /automations: 400 when the organization has no agent of that name. */
export async function createAutomation(ctx: RequestContext, input: NewAutomation): Promise<Automation> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const agent = await getAgentByName({ orgId, name: input.agent_name });
  if (!agent) throw noSuchAgent();
  const id = await nextAutomationId(orgId);
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const actor = activityActor(principal);
  const item: AutomationItem = {
    ...automationKeys.ofAgentById(orgId, input.agent_name, id),
    id,
    name: input.name,
    agent_name: input.agent_name,
    type: input.type,
    path: input.path,
    label: input.label ?? null,
    status: input.status ?? 'active',
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actor.actor_id,
  };
  await transact(
    [
      ...newAutomationWrites(orgId, item),
      agentExists(orgId, input.agent_name),
      ...activityWrites(
        orgId,
        activity(principal, 'automation.created', id, { name: item.name, agent_name: item.agent_name }),
        now,
      ),
    ],
    conflicts,
  );
  return toAutomation(item, agent);
}

const CHANGEABLE = ['name', 'agent_name', 'type', 'path', 'label', 'status'] as const;

/** The fields a PATCH gives that differ from the automation's. */
function changedValues(item: AutomationItem, changes: AutomationChanges): Partial<AutomationItem> {
  return Object.fromEntries(
    CHANGEABLE.filter((field) => changes[field] !== undefined && changes[field] !== (item[field] ?? null)).map(
      (field) => [field, changes[field]],
    ),
  ) as Partial<AutomationItem>;
}

/**
 * PATCH /automations/{id}: any of the fields create takes. A new `agent_name` must name an agent of the
 * organization (400) and moves the automation under it. A tick automation answers 409. A PATCH that
 * changes no value writes nothing.
 */
export async function updateAutomation(
  ctx: RequestContext,
  id: number,
  changes: AutomationChanges,
): Promise<Automation> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 1; ; attempt += 1) {
    const before = await requireAutomation(orgId, id);
    if (isTickAutomation(before)) throw managed(before);
    const changed = changedValues(before, changes);
    const fields = Object.keys(changed);
    const agentName = changed.agent_name ?? before.agent_name;
    if (fields.length === 0) return toAutomation(before, (await agentsNamed(orgId, [agentName])).get(agentName));
    const agent = await getAgentByName({ orgId, name: agentName });
    if (!agent) throw noSuchAgent();

    const now = ctx.ports.clock.now();
    const at = now.toISOString();
    const after: AutomationItem = {
      ...before,
      ...changed,
      ...automationKeys.ofAgentById(orgId, agentName, before.id),
      version: (before.version ?? 0) + 1,
      updated_at: at,
    };
    try {
      await transact(
        [
          ...automationReplaceWrites(orgId, before, after),
          agentExists(orgId, agentName),
          ...activityWrites(orgId, activity(principal, 'automation.updated', id, { changed: fields }), now),
        ],
        conflicts,
      );
      return toAutomation(after, agent);
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt >= WRITE_ATTEMPTS) {
        throw new ConflictError('The automation kept changing while this change was applied; try again');
      }
    }
  }
}

/** DELETE /automations/{id}: answers the automation as it was. A tick automation answers 409. */
export async function deleteAutomation(ctx: RequestContext, id: number): Promise<Automation> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 1; ; attempt += 1) {
    const before = await requireAutomation(orgId, id);
    if (isTickAutomation(before)) throw managed(before);
    const now = ctx.ports.clock.now();
    try {
      await transact([
        ...automationDeleteWrites(orgId, before),
        ...activityWrites(
          orgId,
          activity(principal, 'automation.deleted', id, { name: before.name, agent_name: before.agent_name }),
          now,
        ),
      ]);
      const agents = await agentsNamed(orgId, [before.agent_name]);
      return toAutomation(before, agents.get(before.agent_name));
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt >= WRITE_ATTEMPTS) {
        throw new ConflictError('The automation kept changing while it was deleted; try again');
      }
    }
  }
}
