import { itemExists, itemIsNew } from '#lib/db/conditions';
import { tenantPk } from '#lib/db/keys';
import { type Bounded, queryPage, queryUpTo } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { colorIs, colorIsUnset, type ProductItem, productKeys } from '#lib/products/product-keys';
import { unchangedSince } from '#lib/search/search-postings';
import type { TaskStatus } from '#lib/tasks/task-status';

/** The access patterns of products (keys and item types: lib/products/product-keys.ts). */

const EVERYTHING = { limit: Number.POSITIVE_INFINITY, offset: 0 };

/** The organization's products whose slug begins with `slugPrefix` (all of them for `''`). */
const productsQuery = (orgId: string, slugPrefix: string) => ({
  KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
  ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': `${productKeys.prefix}${slugPrefix}` },
});

export async function getProductBySlug(input: {
  orgId: string;
  slug: string;
  consistent?: boolean;
}): Promise<ProductItem | undefined> {
  const { Item } = await table.get({
    Key: productKeys.bySlug(input.orgId, input.slug),
    ConsistentRead: input.consistent ?? false,
  });
  return Item as ProductItem | undefined;
}

/** A product by its integer id: the pointer, then the product. */
export async function getProductById(input: { orgId: string; id: number }): Promise<ProductItem | undefined> {
  const { Item: pointer } = await table.get({ Key: productKeys.idPointer(input.orgId, input.id) });
  return pointer ? getProductBySlug({ orgId: input.orgId, slug: String(pointer.slug) }) : undefined;
}

/**
 * Every product of the organization, oldest first. An organization has few products, so one Query
 * over the `PRODUCT#` range (which `PRODUCTID#` pointers do not share) serves every list request.
 */
export async function allProducts(orgId: string): Promise<ProductItem[]> {
  const { items } = await queryPage<ProductItem>(productsQuery(orgId, ''), EVERYTHING);
  return items.sort((a, b) => a.id - b.id);
}

/** The organization's first `max` products by slug, for reads that must stay bounded (GET /system/health). */
export const firstProducts = (orgId: string, max: number): Promise<Bounded<ProductItem>> =>
  queryUpTo<ProductItem>(productsQuery(orgId, ''), max);

/** The slugs of the organization that begin with `prefix`, read consistently (one Query). */
export async function slugsStartingWith(input: { orgId: string; prefix: string }): Promise<Set<string>> {
  const { items } = await queryPage<Pick<ProductItem, 'slug'>>(
    { ...productsQuery(input.orgId, input.prefix), ProjectionExpression: 'slug', ConsistentRead: true },
    EVERYTHING,
  );
  return new Set(items.map((item) => item.slug));
}

/**
 * The writes of a new product: the product itself (its key is the slug's guard; refused with reason
 * `slug-taken`) and its id pointer.
 */
export function newProductWrites(orgId: string, item: ProductItem): TransactItem[] {
  return [
    { Put: { Item: item, ConditionExpression: itemIsNew }, reason: 'slug-taken' },
    {
      Put: {
        Item: { ...productKeys.idPointer(orgId, item.id), slug: item.slug },
        ConditionExpression: itemIsNew,
      },
    },
  ];
}

/**
 * The change to a product's `task_counts` when one of its tasks appears (`from` absent), leaves
 * (`to` absent) or changes state, for the task write's transaction; undefined when nothing changes.
 * The condition makes the task write fail rather than count into a product that is not there; it is
 * refused with `reason` (default `product-counts`).
 *
 * @example
 * writes.push(taskCountsChange({ orgId, slug: 'acme', from: 'todo', to: 'done' })!);
 */
export function taskCountsChange(input: {
  orgId: string;
  slug: string;
  from?: TaskStatus;
  to?: TaskStatus;
  reason?: string;
}): TransactItem | undefined {
  if (input.from === input.to) return undefined;
  const sets: string[] = [];
  const names: Record<string, string> = { '#counts': 'task_counts' };
  if (input.from) {
    names['#from'] = input.from;
    sets.push('#counts.#from = if_not_exists(#counts.#from, :zero) - :one');
  }
  if (input.to) {
    names['#to'] = input.to;
    sets.push('#counts.#to = if_not_exists(#counts.#to, :zero) + :one');
  }
  return {
    Update: {
      Key: productKeys.bySlug(input.orgId, input.slug),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: itemExists,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
    },
    reason: input.reason ?? 'product-counts',
  };
}

const COLORS = ['brand_color', 'accent_color'] as const;

/**
 * The conditional update of a product's changed fields (never creating one). With `colorsRead`, it
 * also holds only while both colours are still the ones read; with `textRead`, only while those text
 * fields are (the search postings that go with it were decided on them). Refused with reason
 * `changed-meanwhile`.
 */
export function productUpdate(input: {
  orgId: string;
  slug: string;
  changed: Partial<ProductItem>;
  at: string;
  colorsRead?: Pick<ProductItem, 'brand_color' | 'accent_color'>;
  textRead?: Record<string, string | null>;
}): TransactItem {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':updatedAt': input.at };
  const sets = ['updated_at = :updatedAt'];
  for (const [field, value] of Object.entries(input.changed)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  const conditions = [itemExists];
  if (input.colorsRead) {
    for (const field of COLORS) {
      const seen = input.colorsRead[field] ?? null;
      names[`#seen_${field}`] = field;
      if (seen === null) {
        conditions.push(`(${colorIsUnset(field)})`);
        values[':nullType'] = 'NULL';
      } else {
        conditions.push(colorIs(field));
        values[`:seen_${field}`] = seen;
      }
    }
  }
  if (input.textRead) {
    const unchanged = unchangedSince(input.textRead);
    conditions.push(unchanged.condition);
    Object.assign(names, unchanged.names);
    Object.assign(values, unchanged.values);
  }
  return {
    Update: {
      Key: productKeys.bySlug(input.orgId, input.slug),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
    reason: 'changed-meanwhile',
  };
}
