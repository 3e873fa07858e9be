import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { itemExists } from '#lib/db/transactions';
import type { ProductStatus } from '#lib/products/product-status';
import { TASK_STATUSES, type TaskStatus } from '#lib/tasks/task-status';

/**
 * Where products live in the table. A product's slug never changes, so the record is keyed by it: the
 * key is the slug's uniqueness guard and GET /products/{slug} is one GetItem. Tasks and the public API
 * name products by integer id, which a small pointer item resolves.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | product | `T#<org>` | `PRODUCT#<slug>` | `task_counts`: tasks by status, kept in each task write's transaction |
 * | id pointer | `T#<org>` | `PRODUCTID#<id>` | `slug` |
 */
export const productKeys = {
  bySlug: (orgId: string, slug: string): TableKey => ({ pk: tenantPk(orgId), sk: `PRODUCT#${slug}` }),
  idPointer: (orgId: string, id: number): TableKey => ({ pk: tenantPk(orgId), sk: `PRODUCTID#${pad(id)}` }),
  prefix: 'PRODUCT#',
  counter: 'products',
};

export type TaskCounts = Record<TaskStatus, number>;

export const emptyTaskCounts = (): TaskCounts =>
  Object.fromEntries(TASK_STATUSES.map((status) => [status, 0])) as TaskCounts;

export interface ProductItem {
  pk: string;
  sk: string;
  id: number;
  name: string;
  slug: string;
  tagline: string | null;
  description: string | null;
  status: ProductStatus;
  domain: string | null;
  brand_color: string | null;
  accent_color: string | null;
  task_counts: TaskCounts;
  created_at: string;
  updated_at: string;
}

export async function getProductBySlug(
  orgId: string,
  slug: string,
  consistent = false,
): Promise<ProductItem | undefined> {
  const { Item } = await table.get({ Key: productKeys.bySlug(orgId, slug), ConsistentRead: consistent });
  return Item as ProductItem | undefined;
}

export async function getProductById(orgId: string, id: number): Promise<ProductItem | undefined> {
  const { Item: pointer } = await table.get({ Key: productKeys.idPointer(orgId, id) });
  return pointer ? getProductBySlug(orgId, String(pointer.slug)) : undefined;
}

/**
 * The change to a product's `task_counts` when one of its tasks appears (`from` absent), leaves
 * (`to` absent) or changes state, for the task write's transaction. The condition makes the task write
 * fail rather than count into a product that is not there.
 *
 * @example
 * writes.push(taskCountsChange(orgId, 'acme', { from: 'todo', to: 'done' })!);
 */
export function taskCountsChange(
  orgId: string,
  slug: string,
  change: { from?: TaskStatus; to?: TaskStatus },
): TransactItem | undefined {
  if (change.from === change.to) return undefined;
  const sets: string[] = [];
  const names: Record<string, string> = { '#counts': 'task_counts' };
  if (change.from) {
    names['#from'] = change.from;
    sets.push('#counts.#from = if_not_exists(#counts.#from, :zero) - :one');
  }
  if (change.to) {
    names['#to'] = change.to;
    sets.push('#counts.#to = if_not_exists(#counts.#to, :zero) + :one');
  }
  return {
    Update: {
      Key: productKeys.bySlug(orgId, slug),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: itemExists,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
    },
  };
}
