import { ConflictError, ValidationError } from '#lib/errors';
import type { ProductItem } from '#lib/products/product-keys';
import { getProductById, getProductBySlug } from '#lib/products/product-records';
import { type TaskFields, taskKeys, titleKey } from '#lib/tasks/task-keys';
import { titleHolder } from '#lib/tasks/task-records';
import {
  isOpen,
  TASK_TRANSITIONS,
  type TaskPriority,
  type TaskStatus,
  type TaskStatusInput,
} from '#lib/tasks/task-status';

/**
 * What a task write asks for, resolved against the organization's records, and the refusals every
 * write can answer (the duplicate title, the impossible transition, a product gone meanwhile).
 */

/** The product a write names: by slug (operational API) or by id (public API); null for none. */
export type ProductRef = { slug: string | null } | { id: number | null };

export interface TaskChanges {
  title?: string;
  description?: string | null;
  status?: TaskStatusInput;
  priority?: TaskPriority;
  assignee?: string | null;
  product?: ProductRef;
  category?: string | null;
  tags?: string | null;
  type?: string | null;
  estimated_minutes?: number | null;
  due_date?: string | null;
  resolution?: string | null;
  max_duration_seconds?: number | null;
  depends_on?: number[];
}

/** A write that read a task, then found it changed at commit, starts over this often. */
export const WRITE_ATTEMPTS = 4;

/** The product `ref` names, or null for none; a 400 naming the field when there is no such product. */
export async function resolveProduct(orgId: string, ref: ProductRef): Promise<ProductItem | null> {
  if ('slug' in ref) {
    if (ref.slug === null) return null;
    const product = await getProductBySlug({ orgId, slug: ref.slug });
    if (!product) {
      const message = `No product with slug ${ref.slug}`;
      throw new ValidationError(message, [{ path: 'product_slug', message }]);
    }
    return product;
  }
  if (ref.id === null) return null;
  const product = await getProductById({ orgId, id: ref.id });
  if (!product) {
    const message = `No product ${ref.id}`;
    throw new ValidationError(message, [{ path: 'product_id', message }]);
  }
  return product;
}

/** The open-title guard for the task's state, or none when the task is done or cancelled. */
export const titleGuard = (orgId: string, fields: Pick<TaskFields, 'title' | 'status' | 'product_id'>) =>
  isOpen(fields.status) ? taskKeys.openTitle(orgId, fields.product_id, titleKey(fields.title)) : undefined;

/** The 409 for a duplicate, naming the open task that holds the title. */
export async function duplicateError(
  orgId: string,
  fields: Pick<TaskFields, 'title' | 'status' | 'product_id'>,
): Promise<ConflictError> {
  const guard = titleGuard(orgId, fields);
  const holder = guard ? await titleHolder(guard) : null;
  const message = fields.product_id
    ? 'An open task with this title exists in this product'
    : 'An open task with this title exists (outside any product)';
  return new ConflictError(message, [{ path: 'title', message, existing_id: holder }]);
}

export function transitionError(from: TaskStatus, to: TaskStatus): ConflictError {
  const allowed = TASK_TRANSITIONS[from];
  const message = `A task cannot move from ${from} to ${to}; allowed: ${allowed.join(', ')}`;
  return new ConflictError(message, [{ path: 'status', message, from, to, allowed }]);
}

/** How the refusals of a task write's transaction reach the caller, by reason code. */
export const writeConflicts = (product: ProductItem | null | undefined) => ({
  ...(product ? { 'product-gone': () => productGone(product) } : {}),
  'dependency-changed': () => new ConflictError('A task this one depends on changed at the same moment; try again'),
});

const productGone = (product: ProductItem) => {
  const message = `Product ${product.slug} was removed while the task was being written`;
  return new ValidationError(message, [{ path: 'product', message }]);
};
