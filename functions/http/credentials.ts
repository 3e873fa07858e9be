import { keys } from '#lib/app/keys';
import * as Credentials from '#lib/credentials/store';
import { groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import { deleteCredential, getCredential, listCredentials, putCredential } from '#lib/routes/credentials';

export const handler = groupHandler(
  'credentials',
  [
    route(listCredentials, async ({ query, ctx }) => await Credentials.listCredentials(ctx, query)),
    route(putCredential, async ({ body, ctx }) => {
      const { credential, created } = await Credentials.putCredential(ctx, body);
      return withMeta(credential, { created });
    }),
    route(getCredential, async ({ params, ctx }) => Credentials.getCredential(ctx, params.key)),
    route(deleteCredential, async ({ params, ctx }) => await Credentials.deleteCredential(ctx, params.key)),
  ],
  { ports: { keys } },
);
