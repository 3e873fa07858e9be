import { systemHealth } from '#lib/compliance/system-health';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/system';

/** The system function: the organization's compliance score; tests pass their own clock. */
export function systemHandler(options: GroupOptions = {}) {
  return groupHandler('system', [route(routes.getSystemHealth, async ({ ctx }) => systemHealth(ctx))], options);
}

export const handler = systemHandler();
