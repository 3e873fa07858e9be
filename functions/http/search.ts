import { groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/search';
import { globalSearch } from '#lib/search/global-search';

export const handler = groupHandler('search', [
  route(routes.globalSearch, async ({ query, ctx }) => globalSearch(ctx, query)),
]);
