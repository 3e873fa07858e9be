import { itemIsNew } from '#lib/db/conditions';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { type RunItem, type RunStatus, runKeys } from '#lib/discovery/run-keys';
import { isConditionFailed } from '#lib/errors';
import type { TokenUsage } from '#lib/kernel/ports';

/** The access patterns of discovery runs (keys and item types: lib/discovery/run-keys.ts). */

export const newRunWrite = (item: RunItem): TransactItem => ({
  Put: { Item: item, ConditionExpression: itemIsNew },
});

export async function getRun(input: {
  orgId: string;
  engineId: number;
  runId: number;
  consistent?: boolean;
}): Promise<RunItem | undefined> {
  const { Item } = await table.get({
    Key: runKeys.byId(input.orgId, input.engineId, input.runId),
    ConsistentRead: input.consistent ?? false,
  });
  return Item as RunItem | undefined;
}

/** The engine's `limit` newest runs, newest first (one Query, read backwards). */
export async function recentRuns(input: { orgId: string; engineId: number; limit: number }): Promise<RunItem[]> {
  const result = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': runKeys.partition(input.orgId, input.engineId), ':prefix': runKeys.prefix },
    ScanIndexForward: false,
    Limit: input.limit,
    ConsistentRead: true,
  });
  return (result.Items ?? []) as RunItem[];
}

/**
 * The worker takes a queued run: `queued` → `running`, conditional on it still being queued, so that a
 * message delivered twice (SQS delivers at least once) runs the model once. Answers the run as claimed,
 * or undefined when it was not queued (any more).
 */
export async function claimRun(input: {
  orgId: string;
  engineId: number;
  runId: number;
  at: string;
}): Promise<RunItem | undefined> {
  try {
    const { Attributes } = await table.update({
      Key: runKeys.byId(input.orgId, input.engineId, input.runId),
      UpdateExpression: 'SET #status = :running, started_at = :at',
      ConditionExpression: '#status = :queued',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':running': 'running', ':queued': 'queued', ':at': input.at },
      ReturnValues: 'ALL_NEW',
      reason: 'not-queued',
    });
    return Attributes as RunItem;
  } catch (error) {
    if (isConditionFailed(error, 'not-queued')) return undefined;
    throw error;
  }
}

export interface RunEnd {
  status: Extract<RunStatus, 'succeeded' | 'failed'>;
  model: string | null;
  usage: TokenUsage | null;
  tokens_used: number;
  cost_micro_usd: number;
  compute_ms: number;
  findings: number | null;
  summary: string | null;
  error: string | null;
  finished_at: string;
  expires_at: number;
}

/**
 * The update that ends a run, for the transaction that also counts it on its engine (and debits its
 * tokens): it leaves the active index, and holds only while the run is still `from` (refused with
 * `run-ended` when another worker or the reconciler ended it first).
 */
export function runEndUpdate(input: {
  orgId: string;
  engineId: number;
  runId: number;
  from: Extract<RunStatus, 'queued' | 'running'>;
  end: RunEnd;
}): TransactItem {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':from': input.from };
  const sets = Object.entries(input.end).map(([field, value]) => {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    return `#${field} = :${field}`;
  });
  return {
    Update: {
      Key: runKeys.byId(input.orgId, input.engineId, input.runId),
      UpdateExpression: `SET ${sets.join(', ')} REMOVE gsi1pk, gsi1sk`,
      ConditionExpression: '#status = :from',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
    reason: 'run-ended',
  };
}

/** Runs of every organization still queued or running since before `before` (ISO time), oldest first. */
export async function activeRunsBefore(before: string): Promise<RunItem[]> {
  const items: RunItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
      ExpressionAttributeValues: { ':pk': runKeys.activePk, ':before': before },
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    items.push(...((result.Items ?? []) as RunItem[]));
    start = result.LastEvaluatedKey;
  } while (start);
  return items;
}
