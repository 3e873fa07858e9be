import {
  type AgentItem,
  type AgentNameItem,
  agentKeys,
  agentVersionIs,
  type LeaseItem,
  leaseFree,
  leaseHeldBy,
} from '#lib/agents/agent-keys';
import { itemIsNew } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { type Bounded, queryUpTo } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';

/**
 * The access patterns of agents (keys and item types: lib/agents/agent-keys.ts). Writes are answered
 * as items for the caller's transaction, each refused under a reason code:
 *
 * | reason | refused when |
 * |---|---|
 * | `name-taken` | another agent of the organization has the name |
 * | `stale` | the agent is no longer the version the writer read |
 */

export const nextAgentId = (orgId: string): Promise<number> => nextId(counterKey(agentKeys.counter, tenantPk(orgId)));

export async function getAgentById(input: {
  orgId: string;
  id: number;
  consistent?: boolean;
}): Promise<AgentItem | undefined> {
  const { Item } = await table.get({ Key: agentKeys.byId(input.orgId, input.id), ConsistentRead: input.consistent });
  return Item as AgentItem | undefined;
}

/** The agent called `name`, or undefined: the name record, then the agent. */
export async function getAgentByName(input: {
  orgId: string;
  name: string;
  consistent?: boolean;
}): Promise<AgentItem | undefined> {
  const { Item } = await table.get({ Key: agentKeys.byName(input.orgId, input.name), ConsistentRead: true });
  if (!Item) return undefined;
  return getAgentById({ orgId: input.orgId, id: (Item as AgentNameItem).agent_id, consistent: input.consistent });
}

/** Every agent of the organization, oldest first (an organization has tens of agents, not thousands). */
export async function listAgentItems(orgId: string): Promise<AgentItem[]> {
  const items: AgentItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': agentKeys.prefix },
      ExclusiveStartKey: startKey,
    });
    items.push(...((result.Items ?? []) as AgentItem[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** The organization's first `max` agents, oldest first, for reads that must stay bounded (GET /system/health). */
export const firstAgentItems = (orgId: string, max: number): Promise<Bounded<AgentItem>> =>
  queryUpTo<AgentItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': agentKeys.prefix },
    },
    max,
  );

/** Writes a new agent and takes its name; refused with reason `name-taken` when the name is in use. */
export function newAgentPuts(item: AgentItem, orgId: string): TransactItem[] {
  const name: AgentNameItem = { ...agentKeys.byName(orgId, item.name), agent_id: item.id };
  return [
    { Put: { Item: item, ConditionExpression: itemIsNew } },
    { Put: { Item: name, ConditionExpression: itemIsNew }, reason: 'name-taken' },
  ];
}

/** Replaces an agent with its next version, only while it is still the version read. */
export const agentReplace = (item: AgentItem, readVersion: number): TransactItem => ({
  Put: { Item: item, ConditionExpression: agentVersionIs, ExpressionAttributeValues: { ':version': readVersion } },
  reason: 'stale',
});

/**
 * Marks the task a tick is running on the agent (null when it is done), for the transaction that claims
 * it. Raises the version without a condition: writers holding an older version read again.
 */
export const runningTaskWrite = (input: {
  orgId: string;
  agentId: number;
  taskId: number;
  at: string;
}): TransactItem => ({
  Update: {
    Key: agentKeys.byId(input.orgId, input.agentId),
    UpdateExpression: 'SET running_task_id = :task, updated_at = :at ADD version :one',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':task': input.taskId, ':at': input.at, ':one': 1 },
  },
  reason: 'agent-gone',
});

/** Replaces an agent with its next version on its own (no other write goes with it). */
export async function putAgentVersion(item: AgentItem, readVersion: number): Promise<void> {
  await table.put({
    Item: item,
    ConditionExpression: agentVersionIs,
    ExpressionAttributeValues: { ':version': readVersion },
    reason: 'stale',
  });
}

/**
 * Takes the agent's tick lease for `holder` until `now + ttlMs`, when it is free or expired. Answers
 * false when another tick holds it.
 */
export async function takeLease(input: {
  orgId: string;
  agentId: number;
  holder: string;
  now: number;
  ttlMs: number;
}): Promise<boolean> {
  const item: LeaseItem = {
    ...agentKeys.lease(input.orgId, input.agentId),
    holder: input.holder,
    lease_until: input.now + input.ttlMs,
    expires_at: Math.ceil((input.now + input.ttlMs) / 1000) + 3600,
  };
  try {
    await table.put({ Item: item, ConditionExpression: leaseFree, ExpressionAttributeValues: { ':now': input.now } });
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}

/** Gives the lease back, unless it expired and another tick took it meanwhile. */
export async function releaseLease(input: { orgId: string; agentId: number; holder: string }): Promise<void> {
  try {
    await table.delete({
      Key: agentKeys.lease(input.orgId, input.agentId),
      ConditionExpression: leaseHeldBy,
      ExpressionAttributeValues: { ':holder': input.holder },
    });
  } catch (error) {
    if (!isConditionFailed(error)) throw error;
  }
}
