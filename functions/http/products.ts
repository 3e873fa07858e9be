import { groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import * as Products from '#lib/products/products';
import { createProduct, getProduct, listProducts, updateProduct } from '#lib/routes/products';

export const handler = groupHandler('products', [
  route(listProducts, async ({ query, ctx }) => await Products.listProducts(ctx, query)),
  route(createProduct, async ({ body, ctx }) => await Products.createProduct(ctx, body)),
  route(getProduct, async ({ params, ctx }) => Products.getProduct(ctx, params.slug)),
  route(updateProduct, async ({ params, body, ctx }) => {
    const { product, followUp } = await Products.updateProduct(ctx, params.slug, body);
    return withMeta(product, { follow_up: followUp });
  }),
]);
