import { logs } from '#lib/app/logs';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import { listLogFiles, listLogs, postLog } from '#lib/logs/logs';
import * as routes from '#lib/routes/logs';

/** The logs function (the only one that reads the service's own log output); tests pass their own log source. */
export function logsHandler(options: GroupOptions = {}) {
  return groupHandler(
    'logs',
    [
      route(routes.listLogs, async ({ query, ctx }) => {
        const { items, sources } = await listLogs(ctx, query);
        return withMeta({ items, total: items.length, limit: query.limit, offset: 0 }, { sources });
      }),
      route(routes.createLog, async ({ body, ctx }) => postLog(ctx, body)),
      route(routes.listLogFiles, async ({ ctx }) => {
        const files = await listLogFiles(ctx);
        return { items: files, total: files.length };
      }),
    ],
    { ...options, ports: { logs, ...options.ports } },
  );
}

export const handler = logsHandler();
