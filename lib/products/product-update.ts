import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import { queueJob } from '#lib/jobs/jobs';
import type { Principal, RequestContext } from '#lib/kernel/context';
import type { NewProduct } from '#lib/products/product-create';
import { type Product, type ProductItem, toProduct } from '#lib/products/product-keys';
import { productNotFound } from '#lib/products/product-queries';
import { getProductBySlug, productUpdate } from '#lib/products/product-records';
import { toProductStatus } from '#lib/products/product-status';
import { productSearchFields, wordsOf } from '#lib/search/search-fields';
import { postingWrites } from '#lib/search/search-postings';

/** Changing a product: PATCH /products/{slug}, and the brand-assets job a new colour asks for. */

/** Every field a product is created with may change, except its slug. */
export type ProductChanges = Partial<Omit<NewProduct, 'slug'>>;

/** What a PATCH asked for beyond the change itself: the jobs queued with it. */
export interface FollowUp {
  type: 'job.queued';
  job_type: string;
  id: string;
  status: 'queued';
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

/** A colour update and its job are decided on what was read; a concurrent change makes us read again. */
const UPDATE_ATTEMPTS = 3;

/**
 * PATCH /products/{slug}. Only values that differ are written, with the activity entry, in one
 * transaction whose conditional update never creates a product. A different brand or accent colour
 * also queues a brand-assets job in that transaction; the update is then conditional on the colours
 * still being the ones read, so the job's `previous` colours are exact and two concurrent PATCHes
 * setting the same colour queue one job, not two. A change of the searchable text moves the product's
 * search postings in the same transaction, conditional on the text still being the one read.
 */
export async function updateProduct(
  ctx: RequestContext,
  slug: string,
  changes: ProductChanges,
): Promise<{ product: Product; followUp: FollowUp[] }> {
  const principal = requirePrincipal(ctx);
  for (let attempt = 1; ; attempt += 1) {
    const item = await getProductBySlug({ orgId: principal.orgId, slug, consistent: true });
    if (!item) throw productNotFound();
    try {
      return await applyChanges(ctx, principal, item, changes);
    } catch (error) {
      if (!isConditionFailed(error, 'changed-meanwhile')) throw error;
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
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const next: ProductItem = { ...item, ...changed, updated_at: at };
  const colorsChange = COLORS.some((field) => field in changed);
  const writes: TransactItem[] = [];
  const followUp: FollowUp[] = [];
  if (colorsChange) {
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
    writes.push(...job.writes);
    followUp.push({ type: 'job.queued', job_type: 'brand-assets', id: job.id, status: 'queued' });
  }

  const postings = postingWrites({
    orgId,
    kind: 'product',
    ref: item.slug,
    before: wordsOf(productSearchFields(item)),
    after: wordsOf(productSearchFields(next)),
  });
  const textRead =
    postings.length > 0
      ? Object.fromEntries(productSearchFields(item).filter(([field]) => field !== 'slug'))
      : undefined;
  await transact([
    productUpdate({
      orgId,
      slug: item.slug,
      changed,
      at,
      ...(colorsChange ? { colorsRead: item } : {}),
      ...(textRead ? { textRead } : {}),
    }),
    ...postings,
    ...activityWrites(
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
  ]);
  return { product: toProduct(next), followUp };
}
