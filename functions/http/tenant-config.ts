import { keys } from '#lib/app/keys';
import { queue } from '#lib/app/queue';
import { config } from '#lib/config';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import {
  getTenantConfig,
  getWebhookDelivery,
  listWebhookDeliveries,
  rotateWebhookSecret,
  sendTestWebhook,
  updateTenantConfig,
} from '#lib/routes/tenant-config';
import * as Deliveries from '#lib/webhooks/outbound/delivery-records';
import * as Events from '#lib/webhooks/outbound/events';
import * as TenantConfig from '#lib/webhooks/outbound/tenant-config';

/**
 * The `tenant-config` function. `allowPrivateTargets` is the deployment's ALLOW_PRIVATE_WEBHOOK_TARGETS;
 * tests build the group with it off to see the checks a deployment applies, and with their own queue.
 */
export function tenantConfigHandler(options: GroupOptions & { allowPrivateTargets?: boolean } = {}) {
  const { allowPrivateTargets = config.allowPrivateWebhookTargets, ...group } = options;
  return groupHandler(
    'tenant-config',
    [
      route(getTenantConfig, async ({ ctx }) => TenantConfig.getTenantConfig(ctx)),
      route(updateTenantConfig, async ({ body, ctx }) =>
        TenantConfig.updateTenantConfig(ctx, body, { allowPrivateTargets }),
      ),
      route(rotateWebhookSecret, async ({ ctx }) => TenantConfig.rotateSigningSecret(ctx)),
      route(sendTestWebhook, async ({ body, ctx }) => Events.sendTestEvent(ctx, body ?? {})),
      route(listWebhookDeliveries, async ({ query, ctx }) => Deliveries.listWebhookDeliveries(ctx, query)),
      route(getWebhookDelivery, async ({ params, ctx }) => Deliveries.getWebhookDelivery(ctx, params.id)),
    ],
    { ...group, ports: { keys, queue, ...group.ports } },
  );
}

export const handler = tenantConfigHandler();
