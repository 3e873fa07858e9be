import * as Credentials from '#lib/credentials/store';
import { groupHandler, route } from '#lib/http/group-handler';
import { deleted, HttpResult, listOf } from '#lib/http/results';
import { deleteCredential, getCredential, listCredentials, putCredential } from '#lib/routes/credentials';
import { keyManagement } from '#lib/wiring-keys';

export const handler = groupHandler('credentials', [
  route(listCredentials, async ({ query, ctx }) => {
    const page = await Credentials.listCredentials(ctx, query);
    return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
  }),
  route(putCredential, async ({ body, ctx }) => {
    const { credential, created } = await Credentials.putCredential(ctx, keyManagement(), body);
    return new HttpResult(201, { data: credential, meta: { created } });
  }),
  route(getCredential, async ({ params, ctx }) =>
    Credentials.getCredential(ctx, keyManagement(), params.key),
  ),
  route(deleteCredential, async ({ params, ctx }) =>
    deleted(await Credentials.deleteCredential(ctx, params.key)),
  ),
]);
