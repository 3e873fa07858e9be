import type { Clock, MessageQueue } from '#lib/adapters/ports';
import type { RequestContext } from '#lib/context';
import { NotFoundError, ValidationError } from '#lib/errors';
import { requireOrgRole } from '#lib/identity/access';
import { logger } from '#lib/logger';
import {
  createDelivery,
  type DeliveryMessage,
  failUnqueued,
  toDelivery,
  type WebhookDelivery,
} from '#lib/webhooks/deliveries';
import { type OutboundEventType, WEBHOOK_EVENTS, type WebhookEvent } from '#lib/webhooks/event-types';
import { readWebhookTargets } from '#lib/webhooks/tenant-config';

/**
 * Publishing outbound events: a delivery record and one queue message, nothing more. The caller (a
 * task finishing, an agent failing, a pipeline ending) never waits for the receiver: the delivery
 * function sends the request, retries it and logs every attempt.
 */

export interface PublishDeps {
  queue: MessageQueue;
  clock: Clock;
}

/** Bodies stay well below DynamoDB's 400 KB item limit, attempts included. */
const MAX_PAYLOAD_BYTES = 256 * 1024;

/**
 * The Standard Webhooks body: `{ type, timestamp, data }`, where `data` is the record concerned (task,
 * agent, execution) and, where there is one, its `tokens_used`.
 */
export const eventBody = (type: OutboundEventType, at: Date, data: Record<string, unknown>) =>
  JSON.stringify({ type, timestamp: at.toISOString(), data });

/**
 * Sends `type` with `data` to the organization's URL for it, if one is registered; otherwise does
 * nothing and returns undefined. Returns the pending delivery as soon as it is queued.
 *
 * @example
 * await publishEvent(orgId, 'task_completed', { task, tokens_used: 1234 }, { queue: messageQueue(), clock });
 */
export async function publishEvent(
  orgId: string,
  type: WebhookEvent,
  data: Record<string, unknown>,
  deps: PublishDeps,
): Promise<WebhookDelivery | undefined> {
  const url = (await readWebhookTargets(orgId))[type];
  if (!url) return undefined;
  return enqueueDelivery(orgId, { type, url, data }, deps);
}

/**
 * Creates the pending delivery record, then queues its first attempt. Should the queue refuse the
 * message, the record is closed as failed (saying why) rather than left pending for ever.
 */
export async function enqueueDelivery(
  orgId: string,
  event: { type: OutboundEventType; url: string; data: Record<string, unknown> },
  deps: PublishDeps,
): Promise<WebhookDelivery> {
  const now = deps.clock.now();
  const payload = eventBody(event.type, now, event.data);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
    throw new Error(`The ${event.type} event body is larger than ${MAX_PAYLOAD_BYTES} bytes`);
  }
  const item = await createDelivery({ orgId, type: event.type, url: event.url, payload, now });
  const message: DeliveryMessage = { org_id: orgId, delivery_id: item.id, attempt: 1 };
  try {
    await deps.queue.send('webhook-delivery', message);
  } catch (error) {
    logger.error('queueing a webhook delivery failed', { orgId, deliveryId: item.id, error: error as Error });
    await failUnqueued(orgId, item.id, deps.clock.now(), 'the delivery queue refused the message');
    throw error;
  }
  return toDelivery(item);
}

/**
 * POST /tenant-config/webhooks/test: a `test` event to the URL of `event`, or of the first event (in
 * the order of WEBHOOK_EVENTS) that has one.
 */
export async function sendTestEvent(
  ctx: RequestContext,
  body: { event?: WebhookEvent | undefined },
  deps: { queue: MessageQueue },
): Promise<WebhookDelivery> {
  const principal = requireOrgRole(ctx, 'admin');
  const targets = await readWebhookTargets(principal.orgId);
  const event = body.event ?? WEBHOOK_EVENTS.find((candidate) => targets[candidate] !== null);
  if (!event) {
    throw new NotFoundError('No webhook URL is registered; register one with PATCH /tenant-config first');
  }
  const url = targets[event];
  if (!url) {
    throw new ValidationError(`No webhook URL is registered for ${event}`, [
      { path: 'body.event', message: `${event} has no registered URL` },
    ]);
  }
  return enqueueDelivery(
    principal.orgId,
    {
      type: 'test',
      url,
      data: {
        event,
        organization_id: principal.orgId,
        message: `A test event for the ${event} webhook, sent on request.`,
      },
    },
    { queue: deps.queue, clock: ctx.clock },
  );
}
