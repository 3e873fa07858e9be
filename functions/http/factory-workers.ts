import { updateFactoryConfig } from '#lib/factory/factory-config';
import { factoryHealth, factoryStats, factoryWorkers } from '#lib/factory/factory-status';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/factory-workers';

/** The factory-workers function; tests pass options (a clock they move). */
export function factoryWorkersHandler(options: GroupOptions = {}) {
  return groupHandler(
    'factory-workers',
    [
      route(routes.listFactoryWorkers, async ({ ctx }) => factoryWorkers(ctx)),
      route(routes.factoryWorkerStats, async ({ ctx }) => factoryStats(ctx)),
      route(routes.updateFactoryConfig, async ({ body, ctx }) => updateFactoryConfig(ctx, body)),
      route(routes.factoryHealthSummary, async ({ ctx }) => factoryHealth(ctx)),
    ],
    options,
  );
}

export const handler = factoryWorkersHandler();
