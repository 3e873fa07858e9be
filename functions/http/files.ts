import { searchFiles } from '#lib/files/file-search';
import { createFile, getFile, listFiles } from '#lib/files/files';
import { groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import * as routes from '#lib/routes/files';

/** `page` and `limit` as the window the domain reads, and the meta the answer carries. */
const windowOf = (query: { page: number; limit: number }) => ({
  limit: query.limit,
  offset: (query.page - 1) * query.limit,
});

export const handler = groupHandler('files', [
  route(routes.listFiles, async ({ query, ctx }) => {
    const window = windowOf(query);
    return withMeta(
      { ...(await listFiles(ctx, { category: query.category }, window)), ...window },
      { page: query.page },
    );
  }),
  route(routes.createFile, async ({ body, ctx }) => await createFile(ctx, body)),
  route(routes.searchFiles, async ({ query, ctx }) => {
    const { page, limit, ...search } = query;
    const window = windowOf({ page, limit });
    const { complete, ...found } = await searchFiles(ctx, search, window);
    return withMeta({ ...found, ...window }, { page, complete });
  }),
  route(routes.getFile, async ({ params, ctx }) => await getFile(ctx, params.id)),
]);
