import { agentEfficiency, agentQueueHealth } from '#lib/dashboard/agent-dashboards';
import { dashboardOverview, dashboardStats, instanceDashboard } from '#lib/dashboard/dashboard';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/dashboard';

/** The dashboard function; tests pass options (a fixed clock, for wait times and days). */
export function dashboardHandler(options: GroupOptions = {}) {
  return groupHandler(
    'dashboard',
    [
      route(routes.instanceDashboard, async ({ ctx }) => instanceDashboard(ctx)),
      route(routes.dashboardStats, async ({ ctx }) => dashboardStats(ctx)),
      route(routes.dashboardOverview, async ({ ctx }) => dashboardOverview(ctx)),
      route(routes.agentEfficiency, async ({ ctx }) => agentEfficiency(ctx)),
      route(routes.agentQueueHealth, async ({ ctx }) => agentQueueHealth(ctx)),
    ],
    options,
  );
}

export const handler = dashboardHandler();
