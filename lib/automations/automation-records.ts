import {
  type AutomationItem,
  type AutomationPointerItem,
  type AutomationStatus,
  automationKeys,
  automationVersionIs,
  pointerNames,
} from '#lib/automations/automation-keys';
import { itemExists, itemIsNew } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';

/**
 * The access patterns of automations (keys and item types: lib/automations/automation-keys.ts). Writes
 * are answered as items for the caller's transaction, each refused under a reason code:
 *
 * | reason | refused when |
 * |---|---|
 * | `automation-gone` | a tick's status update finds no tick automation |
 * | `stale` | the automation is no longer the version the writer read (or is gone) |
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

const pointerOf = (orgId: string, item: AutomationItem): AutomationPointerItem => ({
  ...automationKeys.idPointer(orgId, item.id),
  automation_sk: item.sk,
});

/** Writes a new automation (a tick or one created through the API) and its id pointer. */
export const newAutomationWrites = (orgId: string, item: AutomationItem): TransactItem[] => [
  { Put: { Item: item, ConditionExpression: itemIsNew } },
  { Put: { Item: pointerOf(orgId, item), ConditionExpression: itemIsNew } },
];

/**
 * Replaces an automation with its next version, only while it is still the version read. When its agent
 * changed, the automation moves to the new agent's key: the old item is deleted on the same condition,
 * the new one must be new, and the pointer must still name the old key.
 */
export function automationReplaceWrites(orgId: string, before: AutomationItem, after: AutomationItem): TransactItem[] {
  const readVersion = { ':version': before.version ?? 0 };
  if (after.sk === before.sk) {
    return [
      {
        Put: { Item: after, ConditionExpression: automationVersionIs, ExpressionAttributeValues: readVersion },
        reason: 'stale',
      },
    ];
  }
  return [
    {
      Delete: {
        Key: { pk: before.pk, sk: before.sk },
        ConditionExpression: automationVersionIs,
        ExpressionAttributeValues: readVersion,
      },
      reason: 'stale',
    },
    { Put: { Item: after, ConditionExpression: itemIsNew }, reason: 'stale' },
    {
      Put: {
        Item: pointerOf(orgId, after),
        ConditionExpression: pointerNames,
        ExpressionAttributeValues: { ':sk': before.sk },
      },
      reason: 'stale',
    },
  ];
}

/** Deletes an automation and its pointer, only while it is still the version read. */
export const automationDeleteWrites = (orgId: string, before: AutomationItem): TransactItem[] => [
  {
    Delete: {
      Key: { pk: before.pk, sk: before.sk },
      ConditionExpression: automationVersionIs,
      ExpressionAttributeValues: { ':version': before.version ?? 0 },
    },
    reason: 'stale',
  },
  { Delete: { Key: automationKeys.idPointer(orgId, before.id) } },
];

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

async function queryAll(orgId: string, prefix: string, filterId?: number): Promise<AutomationItem[]> {
  const items: AutomationItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: {
        ':pk': tenantPk(orgId),
        ':prefix': prefix,
        ...(filterId === undefined ? {} : { ':id': filterId }),
      },
      ...(filterId === undefined ? {} : { FilterExpression: 'id = :id' }),
      ConsistentRead: filterId !== undefined,
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

/**
 * An automation by id, read consistently: its pointer, then the automation. A tick written before
 * pointers existed has none: it is looked for in the organization's automations (one Query).
 */
export async function getAutomationById(orgId: string, id: number): Promise<AutomationItem | undefined> {
  const { Item: pointer } = await table.get({ Key: automationKeys.idPointer(orgId, id), ConsistentRead: true });
  if (!pointer) {
    const [legacy] = await queryAll(orgId, automationKeys.prefix, id);
    return legacy;
  }
  const sk = (pointer as AutomationPointerItem).automation_sk;
  const { Item } = await table.get({ Key: { pk: tenantPk(orgId), sk }, ConsistentRead: true });
  return Item as AutomationItem | undefined;
}
