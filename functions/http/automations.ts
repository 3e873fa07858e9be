import { getAutomation, listAutomations } from '#lib/automations/automation-queries';
import { createAutomation, deleteAutomation, updateAutomation } from '#lib/automations/automation-writes';
import { groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/automations';

export const handler = groupHandler('automations', [
  route(routes.listAutomations, async ({ query, ctx }) => {
    const { limit, offset, agent_name, type, status, q } = query;
    return await listAutomations(ctx, { agentName: agent_name, type, statuses: status, q }, { limit, offset });
  }),
  route(routes.createAutomation, async ({ body, ctx }) => await createAutomation(ctx, body)),
  route(routes.getAutomation, async ({ params, ctx }) => await getAutomation(ctx, params.id)),
  route(routes.updateAutomation, async ({ params, body, ctx }) => await updateAutomation(ctx, params.id, body)),
  route(routes.deleteAutomation, async ({ params, ctx }) => await deleteAutomation(ctx, params.id)),
]);
