import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { transact } from '#lib/db/transactions';
import { ConflictError, ValidationError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import { orgTotalsWrite } from '#lib/metrics/metric-records';
import { emptyTaskCounts, type Product, type ProductItem, productKeys, toProduct } from '#lib/products/product-keys';
import { newProductWrites, slugsStartingWith } from '#lib/products/product-records';
import { createUnderSlug, slugFromName } from '#lib/products/product-slug';
import { DEFAULT_PRODUCT_STATUS, type ProductStatusInput, toProductStatus } from '#lib/products/product-status';
import { productSearchFields, wordsOf } from '#lib/search/search-fields';
import { postingWrites } from '#lib/search/search-postings';

/** Creating a product: POST /products. */

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

const slugTaken = () => new ConflictError('A product with this slug exists', [{ path: 'slug', message: 'is taken' }]);

/**
 * A generated slug moves on to the next free one this often when concurrent creates take it first:
 * each round of a race has a winner, so this many creates of one name can run at once.
 */
const GENERATED_SLUG_ATTEMPTS = 50;

/**
 * POST /products. One transaction writes the product (its key is the slug guard), the id pointer, its
 * search postings and the activity entry. An explicit slug that exists is 409; a generated one takes
 * the first free of `base`, `base-2`, … found by a consistent Query, and when a concurrent create wins
 * that slug, takes the next free one: never a 409 about a slug the caller did not send.
 */
export async function createProduct(ctx: RequestContext, input: NewProduct): Promise<Product> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const base = input.slug === undefined ? slugFromName(input.name) : undefined;
  if (base === '') {
    throw new ValidationError('The name gives no slug; send a slug', [
      { path: 'slug', message: 'is required when the name has no letters a–z or digits to make one from' },
    ]);
  }
  const id = await nextId(counterKey(productKeys.counter, tenantPk(orgId)));
  return await createUnderSlug({
    ...(input.slug === undefined ? {} : { given: input.slug }),
    base: base ?? '',
    seen: (prefix) => slugsStartingWith({ orgId, prefix }),
    create: (slug) => writeNewProduct(ctx, principal, id, slug, input),
    taken: slugTaken,
    attempts: GENERATED_SLUG_ATTEMPTS,
    busy: 'Too many products with this name are being created at once; try again',
  });
}

async function writeNewProduct(
  ctx: RequestContext,
  principal: Principal,
  id: number,
  slug: string,
  input: NewProduct,
): Promise<Product> {
  const orgId = principal.orgId;
  const now = ctx.ports.clock.now();
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
  await transact([
    ...newProductWrites(orgId, item),
    orgTotalsWrite(orgId, { products: 1 }),
    ...activityWrites(
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
    ...postingWrites({ orgId, kind: 'product', ref: slug, after: wordsOf(productSearchFields(item)) }),
  ]);
  return toProduct(item);
}
