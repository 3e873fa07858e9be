import { groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import { createProduct } from '#lib/products/product-create';
import { getProduct, listProducts } from '#lib/products/product-queries';
import { updateProduct } from '#lib/products/product-update';
import * as routes from '#lib/routes/products';

export const handler = groupHandler('products', [
  route(routes.listProducts, async ({ query, ctx }) => await listProducts(ctx, query)),
  route(routes.createProduct, async ({ body, ctx }) => await createProduct(ctx, body)),
  route(routes.getProduct, async ({ params, ctx }) => getProduct(ctx, params.slug)),
  route(routes.updateProduct, async ({ params, body, ctx }) => {
    const { product, followUp } = await updateProduct(ctx, params.slug, body);
    return withMeta(product, { follow_up: followUp });
  }),
]);
