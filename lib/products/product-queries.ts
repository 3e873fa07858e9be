import type { Page, PageRequest } from '#lib/db/paging';
import { NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { type Product, type ProductItem, toProduct } from '#lib/products/product-keys';
import { allProducts, getProductBySlug } from '#lib/products/product-records';
import { type ProductStatusInput, toProductStatus } from '#lib/products/product-status';

/** Reading products: GET /products and GET /products/{slug}. */

export const productNotFound = () => new NotFoundError('Product not found');

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
  const item = await getProductBySlug({ orgId: principal.orgId, slug, consistent: true });
  if (!item) throw productNotFound();
  return toProduct(item);
}
