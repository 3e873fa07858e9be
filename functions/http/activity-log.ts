import { postActivity } from '#lib/activity/activity-post';
import { activityStats, listActivity } from '#lib/activity/activity-queries';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/activity-log';

/** The activity-log function; tests pass options (a fixed clock, to write and read entries in the past). */
export function activityLogHandler(options: GroupOptions = {}) {
  return groupHandler(
    'activity-log',
    [
      route(routes.listActivity, async ({ query, ctx }) => {
        const { limit, offset, ...filter } = query;
        return listActivity(ctx, filter, { limit, offset });
      }),
      route(routes.createActivity, async ({ body, ctx }) => postActivity(ctx, body)),
      route(routes.activityStats, async ({ ctx }) => activityStats(ctx)),
    ],
    options,
  );
}

export const handler = activityLogHandler();
