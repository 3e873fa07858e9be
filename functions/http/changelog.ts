import { listChangelog } from '#lib/changelog/changelog';
import { changelogFeed, RSS_CONTENT_TYPE } from '#lib/changelog/changelog-feed';
import { changelogSummary } from '#lib/changelog/changelog-summary';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { rawResponse } from '#lib/http/results';
import * as routes from '#lib/routes/changelog';

/** The changelog function; tests pass options (a fixed clock decides the summary's days). */
export function changelogHandler(options: GroupOptions = {}) {
  return groupHandler(
    'changelog',
    [
      route(routes.listChangelog, async ({ query, ctx }) => {
        const { limit, offset, ...filter } = query;
        return listChangelog(ctx, filter, { limit, offset });
      }),
      route(routes.changelogSummary, async ({ query, ctx }) => changelogSummary(ctx, query)),
      route(routes.changelogFeed, async ({ query, ctx }) =>
        rawResponse({ contentType: RSS_CONTENT_TYPE, body: await changelogFeed(ctx, query) }),
      ),
    ],
    options,
  );
}

export const handler = changelogHandler();
