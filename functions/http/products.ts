import { groupHandler, route } from '#lib/http/group-handler';
import { created, HttpResult, listOf } from '#lib/http/results';
import * as Products from '#lib/products/products';
import { createProduct, getProduct, listProducts, updateProduct } from '#lib/routes/products';

export const handler = groupHandler('products', [
  route(listProducts, async ({ query, ctx }) => {
    const page = await Products.listProducts(ctx, query);
    return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
  }),
  route(createProduct, async ({ body, ctx }) => created(await Products.createProduct(ctx, body))),
  route(getProduct, async ({ params, ctx }) => Products.getProduct(ctx, params.slug)),
  route(updateProduct, async ({ params, body, ctx }) => {
    const { product, followUp } = await Products.updateProduct(ctx, params.slug, body);
    return new HttpResult(200, { data: product, meta: { follow_up: followUp } });
  }),
]);
