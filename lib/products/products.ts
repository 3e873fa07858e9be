import { activityActor, activityWrite } from '#lib/activity/activity-log';
import type { Principal, RequestContext } from '#lib/context';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { itemExists, itemIsNew, type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError, ValidationError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import { queueJob } from '#lib/jobs/jobs';
import {
  emptyTaskCounts,
  getProductBySlug,
  type ProductItem,
  productKeys,
  type TaskCounts,
} from '#lib/products/product-keys';
import { firstFreeSlug, numberedSlugPrefix, slugFromName } from '#lib/products/product-slug';
import {
  DEFAULT_PRODUCT_STATUS,
  type ProductStatus,
  type ProductStatusInput,
  toProductStatus,
} from '#lib/products/product-status';
import { isOpen, TASK_STATUSES } from '#lib/tasks/task-status';

/**
 * Products of an organization: create, read, list and update. A product is keyed by its slug
 * (lib/products/product-keys), so the Put that creates it is its own uniqueness guard; its task
 * counts are kept by the task writes and reported here as `stats`.
 */

export interface ProductStats {
  tasks: TaskCounts;
  total_tasks: number;
  open_tasks: number;
}

export interface Product {
  id: number;
  name: string;
  slug: string;
  tagline: string | null;
  description: string | null;
  status: ProductStatus;
  domain: string | null;
  brand_color: string | null;
  accent_color: string | null;
  stats: ProductStats;
  created_at: string;
  updated_at: string;
}

/** What a PATCH asked for beyond the change itself: the jobs queued with it. */
export interface FollowUp {
  type: 'job.queued';
  job_type: string;
  id: string;
  status: 'queued';
}

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

const productNotFound = () => new NotFoundError('Product not found');
const slugTaken = () =>
  new ConflictError('A product with this slug exists', [{ path: 'body.slug', message: 'is taken' }]);

const EVERYTHING: PageRequest = { limit: Number.POSITIVE_INFINITY, offset: 0 };

/**
 * Every product of the organization, oldest first. An organization has few products, so one Query
 * over the `PRODUCT#` range (which `PRODUCTID#` pointers do not share) and filters in memory serve
 * every list request.
 */
async function allProducts(orgId: string): Promise<ProductItem[]> {
  const { items } = await queryPage<ProductItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': productKeys.prefix },
    },
    EVERYTHING,
  );
  return items.sort((a, b) => a.id - b.id);
}

export interface ProductListRequest extends PageRequest {
  status?: ProductStatusInput[] | undefined;
  q?: string | undefined;
  slug?: string | undefined;
}

/** GET /products: filters combine; an empty filter value filters nothing. */
export async function listProducts(ctx: RequestContext, request: ProductListRequest): Promise<Page<Product>> {
  const principal = requirePrincipal(ctx);
  const statuses = request.status?.length ? new Set(request.status.map(toProductStatus)) : undefined;
  const q = request.q?.trim().toLowerCase();
  const matches = (item: ProductItem) =>
    (!statuses || statuses.has(item.status)) &&
    (!q || [item.name, item.tagline, item.description].some((text) => text?.toLowerCase().includes(q))) &&
    (!request.slug || item.slug === request.slug);
  const found = (await allProducts(principal.orgId)).filter(matches);
  return {
    items: found.slice(request.offset, request.offset + request.limit).map(toProduct),
    total: found.length,
  };
}

/** GET /products/{slug}. */
export async function getProduct(ctx: RequestContext, slug: string): Promise<Product> {
  const principal = requirePrincipal(ctx);
  const item = await getProductBySlug(principal.orgId, slug, true);
  if (!item) throw productNotFound();
  return toProduct(item);
}

export interface NewProduct {
  name: string;
  slug?: string | undefined;
  tagline?: string | null | undefined;
  description?: string | null | undefined;
  status?: ProductStatusInput | undefined;
  domain?: string | null | undefined;
  brand_color?: string | null | undefined;
  accent_color?: string | null | undefined;
}

/** A generated slug is retried this often when concurrent creates take the free one first. */
const GENERATED_SLUG_ATTEMPTS = 3;

/**
 * POST /products. One transaction writes the product (its key is the slug guard), the id pointer and
 * the activity entry. An explicit slug that exists is 409; a generated one takes the first free of
 * `base`, `base-2`, … found by one Query, and moves on when a concurrent create wins the race.
 */
export async function createProduct(ctx: RequestContext, input: NewProduct): Promise<Product> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const base = input.slug === undefined ? slugFromName(input.name) : undefined;
  if (base === '') {
    throw new ValidationError('The name gives no slug; send a slug', [
      {
        path: 'body.slug',
        message: 'is required when the name has no letters a–z or digits to make one from',
      },
    ]);
  }
  const id = await nextId(counterKey(productKeys.counter, tenantPk(orgId)));
  const create = (slug: string) => writeNewProduct(ctx, principal, id, slug, input);
  if (base === undefined) return create(input.slug as string);

  for (let attempt = 1; ; attempt += 1) {
    const slug = firstFreeSlug(base, await takenSlugs(orgId, numberedSlugPrefix(base)));
    try {
      return await create(slug);
    } catch (error) {
      // Another create took this slug between the Query and the write: look again.
      if (!(error instanceof ConflictError) || attempt >= GENERATED_SLUG_ATTEMPTS) throw error;
    }
  }
}

async function takenSlugs(orgId: string, prefix: string): Promise<Set<string>> {
  const { items } = await queryPage<Pick<ProductItem, 'slug'>>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': `${productKeys.prefix}${prefix}` },
      ProjectionExpression: 'slug',
      ConsistentRead: true,
    },
    EVERYTHING,
  );
  return new Set(items.map((item) => item.slug));
}

async function writeNewProduct(
  ctx: RequestContext,
  principal: Principal,
  id: number,
  slug: string,
  input: NewProduct,
): Promise<Product> {
  const orgId = principal.orgId;
  const now = ctx.clock.now();
  const at = now.toISOString();
  const item: ProductItem = {
    ...productKeys.bySlug(orgId, slug),
    id,
    name: input.name,
    slug,
    tagline: input.tagline ?? null,
    description: input.description ?? null,
    status: input.status ? toProductStatus(input.status) : DEFAULT_PRODUCT_STATUS,
    domain: input.domain ?? null,
    brand_color: input.brand_color ?? null,
    accent_color: input.accent_color ?? null,
    task_counts: emptyTaskCounts(),
    created_at: at,
    updated_at: at,
  };
  await transact(
    [
      { Put: { Item: item, ConditionExpression: itemIsNew } },
      {
        Put: {
          Item: { ...productKeys.idPointer(orgId, id), slug },
          ConditionExpression: itemIsNew,
        },
      },
      activityWrite(
        orgId,
        {
          ...activityActor(principal),
          action: 'product.created',
          entity_type: 'product',
          entity_id: slug,
          metadata: { id, name: item.name },
        },
        now,
      ),
    ],
    { 0: slugTaken },
  );
  return toProduct(item);
}

export interface ProductChanges {
  name?: string | undefined;
  tagline?: string | null | undefined;
  description?: string | null | undefined;
  status?: ProductStatusInput | undefined;
  domain?: string | null | undefined;
  brand_color?: string | null | undefined;
  accent_color?: string | null | undefined;
}

type ChangeableField = keyof ProductChanges;
const CHANGEABLE: ChangeableField[] = [
  'name',
  'tagline',
  'description',
  'status',
  'domain',
  'brand_color',
  'accent_color',
];
const COLORS = ['brand_color', 'accent_color'] as const;

/** The stored values a PATCH gives, keeping only those that differ from the product's. */
function changedValues(item: ProductItem, changes: ProductChanges): Partial<ProductItem> {
  const wanted: Partial<Record<ChangeableField, unknown>> = {
    ...changes,
    ...(changes.status !== undefined ? { status: toProductStatus(changes.status) } : {}),
  };
  return Object.fromEntries(
    CHANGEABLE.filter((field) => wanted[field] !== undefined && wanted[field] !== (item[field] ?? null)).map(
      (field) => [field, wanted[field]],
    ),
  ) as Partial<ProductItem>;
}

/** The update ran into a concurrent change of the colours it decided on (or a deletion). */
class ProductChangedMeanwhile extends Error {}

/** A colour update and its job are decided on what was read; a concurrent change makes us read again. */
const UPDATE_ATTEMPTS = 3;

/**
 * PATCH /products/{slug}. Only values that differ are written, with the activity entry, in one
 * transaction whose conditional update never creates a product. A different brand or accent colour
 * also queues a brand-assets job in that transaction; the update is then conditional on the colours
 * still being the ones read, so the job's `previous` colours are exact and two concurrent PATCHes
 * setting the same colour queue one job, not two.
 */
export async function updateProduct(
  ctx: RequestContext,
  slug: string,
  changes: ProductChanges,
): Promise<{ product: Product; followUp: FollowUp[] }> {
  const principal = requirePrincipal(ctx);
  for (let attempt = 1; ; attempt += 1) {
    const item = await getProductBySlug(principal.orgId, slug, true);
    if (!item) throw productNotFound();
    try {
      return await applyChanges(ctx, principal, item, changes);
    } catch (error) {
      if (!(error instanceof ProductChangedMeanwhile)) throw error;
      if (attempt >= UPDATE_ATTEMPTS) {
        throw new ConflictError('The product was changed by another request at the same time; try again');
      }
    }
  }
}

async function applyChanges(
  ctx: RequestContext,
  principal: Principal,
  item: ProductItem,
  changes: ProductChanges,
): Promise<{ product: Product; followUp: FollowUp[] }> {
  const changed = changedValues(item, changes);
  const fields = Object.keys(changed) as ChangeableField[];
  if (fields.length === 0) return { product: toProduct(item), followUp: [] };

  const orgId = principal.orgId;
  const now = ctx.clock.now();
  const at = now.toISOString();
  const next: ProductItem = { ...item, ...changed, updated_at: at };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':updatedAt': at };
  const sets = ['updated_at = :updatedAt'];
  for (const field of fields) {
    names[`#${field}`] = field;
    values[`:${field}`] = changed[field];
    sets.push(`#${field} = :${field}`);
  }
  const conditions = [itemExists];
  const writes: TransactItem[] = [];
  const followUp: FollowUp[] = [];

  if (COLORS.some((field) => field in changed)) {
    for (const field of COLORS) {
      const seen = item[field] ?? null;
      names[`#seen_${field}`] = field;
      if (seen === null) {
        conditions.push(
          `(attribute_not_exists(#seen_${field}) OR attribute_type(#seen_${field}, :nullType))`,
        );
        values[':nullType'] = 'NULL';
      } else {
        conditions.push(`#seen_${field} = :seen_${field}`);
        values[`:seen_${field}`] = seen;
      }
    }
    const job = queueJob(
      orgId,
      {
        type: 'brand-assets',
        payload: {
          product_id: item.id,
          product_slug: item.slug,
          brand_color: next.brand_color ?? null,
          accent_color: next.accent_color ?? null,
          previous: { brand_color: item.brand_color ?? null, accent_color: item.accent_color ?? null },
        },
        idempotencyKey: `product:${item.id}:colors:${at}`,
      },
      now,
    );
    writes.push(job.write);
    followUp.push({ type: 'job.queued', job_type: 'brand-assets', id: job.id, status: 'queued' });
  }

  await transact(
    [
      {
        Update: {
          Key: productKeys.bySlug(orgId, item.slug),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      activityWrite(
        orgId,
        {
          ...activityActor(principal),
          action: 'product.updated',
          entity_type: 'product',
          entity_id: item.slug,
          metadata: { changed: fields },
        },
        now,
      ),
      ...writes,
    ],
    { 0: () => new ProductChangedMeanwhile() },
  );
  return { product: toProduct(next), followUp };
}
