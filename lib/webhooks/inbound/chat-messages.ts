import { randomBase62 } from '#lib/crypto/secrets';
import { itemIsNew } from '#lib/db/conditions';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { ChatMessagePayload, parsePayload } from '#lib/webhooks/inbound/payloads';
import { receipt, recordDeliveryOnce, type WebhookReceipt } from '#lib/webhooks/inbound/receipts';
import { type InboundRequest, verifyInboundWebhook } from '#lib/webhooks/inbound/verification';
import { webhookKeys } from '#lib/webhooks/inbound/webhook-keys';

/**
 * POST /webhooks: inbound customer chat messages. The customer-support workflow will run as agent tasks,
 * which are a later issue; until then each message becomes an open support request that the
 * organization can work from, and the response says so.
 */

export const CHAT_EVENT = 'chat.message';

export async function receiveChatMessage(
  ctx: RequestContext,
  request: InboundRequest & { body: unknown },
): Promise<WebhookReceipt> {
  const now = ctx.ports.clock.now();
  const { orgId } = await verifyInboundWebhook(ctx, 'chat', request);
  const message = parsePayload(ChatMessagePayload, request.body);
  const requestId = `sup_${randomBase62(16)}`;
  const at = now.toISOString();
  const outcome = await recordDeliveryOnce({
    source: 'chat',
    orgId,
    eventId: message.id,
    event: CHAT_EVENT,
    payload: request.body,
    now,
    writes: [
      {
        Put: {
          Item: {
            ...webhookKeys.supportRequest(orgId, requestId),
            id: requestId,
            status: 'open',
            source: 'chat',
            channel: message.channel,
            message_id: message.id,
            // Support has to be able to answer the customer, so the request keeps who wrote
            // (unlike the stored payload, whose contact details are redacted).
            customer: {
              id: message.user.id,
              name: message.user.name,
              email: message.user.email ?? null,
            },
            text: message.text,
            sent_at: message.sent_at,
            created_at: at,
            updated_at: at,
          },
          ConditionExpression: itemIsNew,
        },
      },
    ],
  });
  logger.info('inbound webhook accepted', {
    source: 'chat',
    event: CHAT_EVENT,
    org_id: orgId,
    event_id: message.id,
    outcome,
  });
  return receipt(
    CHAT_EVENT,
    [
      {
        type: 'support_request.created',
        id: requestId,
        status: 'open',
        detail: [
          'Recorded as an open support request for the customer-support workflow;',
          'support tasks for agents are not available yet, so no task was created',
        ].join(' '),
      },
    ],
    outcome === 'duplicate',
  );
}
