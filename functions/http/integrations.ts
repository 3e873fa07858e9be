import { keys } from '#lib/app/keys';
import { groupHandler, route } from '#lib/http/group-handler';
import * as Integrations from '#lib/integrations/integrations';
import { configureIntegration, getIntegrationStatus, listIntegrations } from '#lib/routes/integrations';

export const handler = groupHandler(
  'integrations',
  [
    route(listIntegrations, async ({ ctx }) => {
      const items = await Integrations.listIntegrations(ctx);
      return { items, total: items.length, limit: items.length, offset: 0 };
    }),
    route(getIntegrationStatus, async ({ params, ctx }) => Integrations.integrationStatus(ctx, params.id)),
    route(configureIntegration, async ({ params, body, ctx }) =>
      Integrations.configureIntegration(ctx, params.id, body.fields),
    ),
  ],
  { ports: { keys } },
);
