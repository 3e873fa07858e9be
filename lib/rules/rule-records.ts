import { itemIsNew } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { type QueryInput, table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { type RuleItem, ruleKeys, ruleVersionIs } from '#lib/rules/rule-keys';

/**
 * The access patterns of rules (keys and item types: lib/rules/rule-keys.ts). Writes are answered as
 * items for the caller's transaction; a write based on a version that is no longer stored is refused
 * with reason `stale`.
 */

export const nextRuleId = (orgId: string): Promise<number> => nextId(counterKey(ruleKeys.counter, tenantPk(orgId)));

export async function getRuleItem(orgId: string, id: number): Promise<RuleItem | undefined> {
  const { Item } = await table.get({ Key: ruleKeys.byId(orgId, id), ConsistentRead: true });
  return Item as RuleItem | undefined;
}

async function readAll(input: QueryInput): Promise<RuleItem[]> {
  const items: RuleItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({ ...input, ExclusiveStartKey: startKey });
    items.push(...((result.Items ?? []) as RuleItem[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Every rule of the organization, oldest first. */
export const allRules = (orgId: string): Promise<RuleItem[]> =>
  readAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': ruleKeys.prefix },
  });

/** The rules of one scope, oldest first (the scope index). */
export const rulesOfScope = (orgId: string, scope: string): Promise<RuleItem[]> =>
  readAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': ruleKeys.byScopePk(orgId, scope) },
  });

export const newRulePut = (item: RuleItem): TransactItem => ({
  Put: { Item: item, ConditionExpression: itemIsNew },
});

/** Replaces a rule with its next version, only while it is still the version read. */
export const ruleReplace = (item: RuleItem, readVersion: number): TransactItem => ({
  Put: { Item: item, ConditionExpression: ruleVersionIs, ExpressionAttributeValues: { ':version': readVersion } },
  reason: 'stale',
});

/** Deletes a rule, only while it is still the version read (a rule made permanent meanwhile stays). */
export const ruleDelete = (orgId: string, id: number, readVersion: number): TransactItem => ({
  Delete: {
    Key: ruleKeys.byId(orgId, id),
    ConditionExpression: ruleVersionIs,
    ExpressionAttributeValues: { ':version': readVersion },
  },
  reason: 'stale',
});
