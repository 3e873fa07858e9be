import { config } from '#lib/config';
import { groupHandler, route } from '#lib/http/group-handler';
import { accepted, listOf } from '#lib/http/results';
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
import { keyManagement } from '#lib/wiring-keys';
import { messageQueue } from '#lib/wiring-queue';

/**
 * The `tenant-config` function. `allowPrivateTargets` is the deployment's ALLOW_PRIVATE_WEBHOOK_TARGETS;
 * tests build the group with it off to see the checks a deployment applies.
 */
export function tenantConfigHandler(options: { allowPrivateTargets?: boolean } = {}) {
  const allowPrivateTargets = options.allowPrivateTargets ?? config.allowPrivateWebhookTargets;
  return groupHandler('tenant-config', [
    route(getTenantConfig, async ({ ctx }) => TenantConfig.getTenantConfig(ctx, { keys: keyManagement() })),
    route(updateTenantConfig, async ({ body, ctx }) =>
      TenantConfig.updateTenantConfig(ctx, body, { keys: keyManagement(), allowPrivateTargets }),
    ),
    route(rotateWebhookSecret, async ({ ctx }) =>
      TenantConfig.rotateSigningSecret(ctx, { keys: keyManagement() }),
    ),
    route(sendTestWebhook, async ({ body, ctx }) =>
      accepted(await Events.sendTestEvent(ctx, body ?? {}, { queue: messageQueue() })),
    ),
    route(listWebhookDeliveries, async ({ query, ctx }) => {
      const page = await Deliveries.listWebhookDeliveries(ctx, query);
      return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
    }),
    route(getWebhookDelivery, async ({ params, ctx }) => Deliveries.getWebhookDelivery(ctx, params.id)),
  ]);
}

export const handler = tenantConfigHandler();
