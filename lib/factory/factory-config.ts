import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { queryUpTo } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { DEFAULT_CONFIG, type FactoryConfig, factoryKeys, type PoolItem } from '#lib/factory/factory-keys';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/** The factory's setting per organization and the records of its running pools (keys: factory-keys.ts). */

export async function readConfig(orgId: string): Promise<FactoryConfig> {
  const { Item } = await table.get({ Key: { pk: factoryKeys.pk(orgId), sk: factoryKeys.config } });
  if (!Item) return { ...DEFAULT_CONFIG };
  return {
    worker_count: Number(Item.worker_count),
    max_concurrent: Number(Item.max_concurrent),
    updated_at: String(Item.updated_at),
  };
}

/**
 * PATCH /factory-workers/config: the fields given replace the setting's; the organization's running pool
 * applies it at its next heartbeat (more workers start at once; fewer stop after their current jobs).
 * The change is recorded in the activity log in the same transaction.
 */
export async function updateFactoryConfig(
  ctx: RequestContext,
  changes: { worker_count?: number; max_concurrent?: number },
): Promise<FactoryConfig> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const now = ctx.ports.clock.now();
  const current = await readConfig(orgId);
  const next: FactoryConfig = {
    worker_count: changes.worker_count ?? current.worker_count,
    max_concurrent: changes.max_concurrent ?? current.max_concurrent,
    updated_at: now.toISOString(),
  };
  const entry = {
    ...activityActor(principal),
    action: 'factory.config_updated',
    entity_type: 'factory_config',
    entity_id: orgId,
    metadata: { worker_count: next.worker_count, max_concurrent: next.max_concurrent },
  };
  await transact([
    { Put: { Item: { pk: factoryKeys.pk(orgId), sk: factoryKeys.config, ...next } } },
    ...activityWrites(orgId, entry, now),
  ]);
  return next;
}

/** The pools of the organization that wrote a record, stale ones included (the caller tells them apart). */
export async function poolRecords(orgId: string): Promise<PoolItem[]> {
  const { items } = await queryUpTo<PoolItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': factoryKeys.pk(orgId), ':prefix': factoryKeys.poolPrefix },
    },
    50,
  );
  return items;
}

export const writePool = (item: PoolItem): Promise<unknown> => table.put({ Item: item });

export const removePool = (orgId: string, runtimeId: string): Promise<unknown> =>
  table.delete({ Key: { pk: factoryKeys.pk(orgId), sk: factoryKeys.pool(runtimeId) } });
