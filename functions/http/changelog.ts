import { listChangelog } from '#lib/changelog/changelog';
import { groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/changelog';

export const handler = groupHandler('changelog', [
  route(routes.listChangelog, async ({ query, ctx }) => {
    const { limit, offset, ...filter } = query;
    return listChangelog(ctx, filter, { limit, offset });
  }),
]);
