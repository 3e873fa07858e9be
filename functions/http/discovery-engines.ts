import { queue } from '#lib/app/queue';
import { scheduler } from '#lib/app/scheduler';
import { engineEfficiency, getEngineDetail, listEngines } from '#lib/discovery/engine-queries';
import { createEngine, deleteEngine, updateEngine } from '#lib/discovery/engine-writes';
import { queueRun } from '#lib/discovery/run-start';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import * as routes from '#lib/routes/discovery-engines';

/**
 * The discovery-engines function: engines and their schedules (the Scheduler port), runs asked for (one
 * message each on the `discovery-run` queue) and the reports. Tests pass options (their scheduler and
 * queue, a fixed clock).
 */
export function discoveryEnginesHandler(options: GroupOptions = {}) {
  return groupHandler(
    'discovery-engines',
    [
      route(routes.listEngines, async ({ query, ctx }) => await listEngines(ctx, query)),
      route(routes.createEngine, async ({ body, ctx }) => await createEngine(ctx, body)),
      route(routes.engineEfficiency, async ({ ctx }) => await engineEfficiency(ctx)),
      route(routes.getEngine, async ({ params, ctx }) => await getEngineDetail(ctx, params.slug)),
      route(routes.updateEngine, async ({ params, body, ctx }) => await updateEngine(ctx, params.slug, body)),
      route(routes.deleteEngine, async ({ params, ctx }) => {
        const deleted = await deleteEngine(ctx, params.slug);
        return withMeta(deleted.engine, {
          deleted: true,
          schedule_removed: deleted.scheduleRemoved,
          schedule_error: deleted.scheduleError,
        });
      }),
      route(routes.runEngine, async ({ params, ctx }) => await queueRun(ctx, params.slug)),
    ],
    { ...options, ports: { scheduler, queue, ...options.ports } },
  );
}

export const handler = discoveryEnginesHandler();
