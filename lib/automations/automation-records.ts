import { type AutomationItem, type AutomationStatus, automationKeys } from '#lib/automations/automation-keys';
import { itemExists, itemIsNew } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';

/**
 * The access patterns of automations (keys and item types: lib/automations/automation-keys.ts). Writes
 * are answered as items for the caller's transaction.
 */

export const nextAutomationId = (orgId: string): Promise<number> =>
  nextId(counterKey(automationKeys.counter, tenantPk(orgId)));

/** The tick automation of a new agent, as written by the agent's creation. */
export function agentTickAutomation(input: {
  orgId: string;
  id: number;
  agentName: string;
  status: AutomationStatus;
  at: string;
}): AutomationItem {
  return {
    ...automationKeys.tick(input.orgId, input.agentName),
    id: input.id,
    name: `${input.agentName}-tick`,
    agent_name: input.agentName,
    type: 'schedule',
    path: 'functions/schedule/agent-tick',
    label: `Runs ${input.agentName}: picks its highest-priority todo task and works on it`,
    status: input.status,
    created_at: input.at,
    updated_at: input.at,
  };
}

export const newAutomationPut = (item: AutomationItem): TransactItem => ({
  Put: { Item: item, ConditionExpression: itemIsNew },
});

/**
 * Sets the status of an agent's tick automation, when the agent has one (an update never creates a
 * half-filled automation: refused with reason `automation-gone` when there is none).
 */
export const tickStatusUpdate = (input: {
  orgId: string;
  agentName: string;
  status: AutomationStatus;
  at: string;
}): TransactItem => ({
  Update: {
    Key: automationKeys.tick(input.orgId, input.agentName),
    UpdateExpression: 'SET #status = :status, updated_at = :at',
    ConditionExpression: itemExists,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':status': input.status, ':at': input.at },
  },
  reason: 'automation-gone',
});

async function queryAll(orgId: string, prefix: string): Promise<AutomationItem[]> {
  const items: AutomationItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix },
      ExclusiveStartKey: startKey,
    });
    items.push(...((result.Items ?? []) as AutomationItem[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items.sort((a, b) => a.id - b.id);
}

/** The automations of one agent, by id. */
export const automationsOfAgent = (orgId: string, agentName: string): Promise<AutomationItem[]> =>
  queryAll(orgId, automationKeys.ofAgent(agentName));

/** Every automation of the organization, by id (one Query serves a whole agent list). */
export const allAutomations = (orgId: string): Promise<AutomationItem[]> => queryAll(orgId, automationKeys.prefix);
