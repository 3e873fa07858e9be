import { keys } from '#lib/app/keys';
import { config } from '#lib/config';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import * as Integrations from '#lib/integrations/integrations';
import { configureIntegration, getIntegrationStatus, listIntegrations } from '#lib/routes/integrations';

/**
 * The `integrations` function. `allowPrivateTargets` is the deployment's ALLOW_PRIVATE_WEBHOOK_TARGETS,
 * which URL fields are held to; tests build the group with it off to see the checks a deployment applies.
 */
export function integrationsHandler(options: GroupOptions & { allowPrivateTargets?: boolean } = {}) {
  const { allowPrivateTargets = config.allowPrivateWebhookTargets, ...group } = options;
  return groupHandler(
    'integrations',
    [
      route(listIntegrations, async ({ ctx }) => {
        const items = await Integrations.listIntegrations(ctx);
        return { items, total: items.length, limit: items.length, offset: 0 };
      }),
      route(getIntegrationStatus, async ({ params, ctx }) => Integrations.integrationStatus(ctx, params.id)),
      route(configureIntegration, async ({ params, body, ctx }) =>
        Integrations.configureIntegration(ctx, params.id, body.fields, { allowPrivateTargets }),
      ),
    ],
    { ...group, ports: { keys, ...group.ports } },
  );
}

export const handler = integrationsHandler();
