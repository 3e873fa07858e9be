import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import type { ProductStatus } from '#lib/products/product-status';
import { isOpen, TASK_STATUSES, type TaskStatus } from '#lib/tasks/task-status';

/**
 * Where products live in the table (access patterns: lib/products/product-records.ts). A product's slug
 * never changes, so the record is keyed by it: the key is the slug's uniqueness guard and
 * GET /products/{slug} is one GetItem. Tasks and the public API name products by integer id, which a
 * small pointer item resolves.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | product | `T#<org>` | `PRODUCT#<slug>` | `task_counts`: its tasks by status, kept by each task write |
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

export interface ProductItem extends TableKey {
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

export interface ProductStats {
  tasks: TaskCounts;
  total_tasks: number;
  open_tasks: number;
}

/** A product as the API shows it: the item without keys, its task counts as `stats`. */
export type Product = Omit<ProductItem, 'pk' | 'sk' | 'task_counts'> & { stats: ProductStats };

export function productStats(counts: Partial<TaskCounts> | undefined): ProductStats {
  const tasks = { ...emptyTaskCounts(), ...counts };
  return {
    tasks,
    total_tasks: TASK_STATUSES.reduce((sum, status) => sum + tasks[status], 0),
    open_tasks: TASK_STATUSES.filter(isOpen).reduce((sum, status) => sum + tasks[status], 0),
  };
}

export const toProduct = (item: ProductItem): Product => ({
  id: item.id,
  name: item.name,
  slug: item.slug,
  tagline: item.tagline ?? null,
  description: item.description ?? null,
  status: item.status,
  domain: item.domain ?? null,
  brand_color: item.brand_color ?? null,
  accent_color: item.accent_color ?? null,
  stats: productStats(item.task_counts),
  created_at: item.created_at,
  updated_at: item.updated_at,
});

/** The colours a product update decided on are still the ones it read (`#seen_<field>`, `:seen_<field>`). */
export const colorIs = (field: 'brand_color' | 'accent_color'): string => `#seen_${field} = :seen_${field}`;

/** …or, where the update read none, there is still none (`:nullType` is `NULL`). */
export const colorIsUnset = (field: 'brand_color' | 'accent_color'): string =>
  `attribute_not_exists(#seen_${field}) OR attribute_type(#seen_${field}, :nullType)`;
