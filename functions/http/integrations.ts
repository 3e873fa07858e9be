import { groupHandler, route } from '#lib/http/group-handler';
import { listOf } from '#lib/http/results';
import * as Integrations from '#lib/integrations/integrations';
import { configureIntegration, getIntegrationStatus, listIntegrations } from '#lib/routes/integrations';
import { keyManagement } from '#lib/wiring-keys';

export const handler = groupHandler('integrations', [
  route(listIntegrations, async ({ ctx }) => {
    const items = await Integrations.listIntegrations(ctx);
    return listOf(items, { total: items.length, limit: items.length, offset: 0 });
  }),
  route(getIntegrationStatus, async ({ params, ctx }) => Integrations.integrationStatus(ctx, params.id)),
  route(configureIntegration, async ({ params, body, ctx }) =>
    Integrations.configureIntegration(ctx, keyManagement(), params.id, body.fields),
  ),
]);
