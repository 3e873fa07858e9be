import type { TransactItem } from '#lib/db/transactions';
import { NotFoundError, ValidationError } from '#lib/errors';
import { requireOrgRole } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import {
  type DeliveryItem,
  type DeliveryMessage,
  deliveryPut,
  failUnqueued,
  markQueued,
  newDeliveryItem,
  putDelivery,
  toDelivery,
  unqueuedDeliveryItems,
  type WebhookDelivery,
} from '#lib/webhooks/outbound/delivery-records';
import { type OutboundEventType, WEBHOOK_EVENTS, type WebhookEvent } from '#lib/webhooks/outbound/event-types';
import { readWebhookTargets } from '#lib/webhooks/outbound/tenant-config-records';

/**
 * Publishing outbound events: a delivery record and one queue message, nothing more. The caller (a
 * task finishing, an agent failing, a pipeline ending) never waits for the receiver: the delivery
 * function sends the request, retries it and logs every attempt.
 *
 * An event that announces a change is prepared before the change's transaction and written in it
 * (`prepareEvent`), so the change and its delivery record land together or not at all; its message is
 * queued after the commit (`queuePrepared`). Should the process stop in between, or the queue refuse,
 * the sweeper (`requeueUnqueued`, every minute) queues it: each event is delivered, and only once,
 * since the delivery function sends each attempt of a delivery at most once. Messages go to
 * `ctx.ports.queue`; times come from `ctx.ports.clock`.
 */

/** Bodies stay well below DynamoDB's 400 KB item limit, attempts included. */
const MAX_PAYLOAD_BYTES = 256 * 1024;

/**
 * The Standard Webhooks body: `{ type, timestamp, data }`, where `data` is the record concerned (task,
 * agent, execution) and, where there is one, its `tokens_used`.
 */
export const eventBody = (type: OutboundEventType, at: Date, data: Record<string, unknown>) =>
  JSON.stringify({ type, timestamp: at.toISOString(), data });

function deliveryOf(
  orgId: string,
  event: { type: OutboundEventType; url: string; data: Record<string, unknown> },
  now: Date,
): DeliveryItem {
  const payload = eventBody(event.type, now, event.data);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
    throw new Error(`The ${event.type} event body is larger than ${MAX_PAYLOAD_BYTES} bytes`);
  }
  return newDeliveryItem({ orgId, type: event.type, url: event.url, payload, now });
}

/** An event prepared for a transaction: `write` goes into it, `queuePrepared` follows its commit. */
export interface PreparedEvent {
  delivery: DeliveryItem;
  write: TransactItem;
}

/**
 * Prepares `type` with `data` for the organization's URL for it; undefined when none is registered.
 * `data` may be a promise: the caller's read then overlaps the targets' read.
 *
 * @example
 * const event = await prepareEvent(orgId, 'task_completed', { task }, now);
 * await transact([...writes, ...(event ? [event.write] : [])]);
 * if (event) await queuePrepared(ctx, event);
 */
export async function prepareEvent(
  orgId: string,
  type: WebhookEvent,
  data: Record<string, unknown> | Promise<Record<string, unknown>>,
  now: Date,
): Promise<PreparedEvent | undefined> {
  // Data still being read is read side by side with the targets (and dropped when there is none).
  if (data instanceof Promise) data.catch(() => undefined);
  const url = (await readWebhookTargets(orgId))[type];
  if (!url) return undefined;
  const delivery = deliveryOf(orgId, { type, url, data: await data }, now);
  return { delivery, write: deliveryPut(delivery) };
}

/** Queues the first attempt of a committed delivery and takes it out of the unqueued index. */
async function queueFirstAttempt(ctx: RequestContext, delivery: DeliveryItem): Promise<void> {
  const message: DeliveryMessage = { org_id: delivery.org_id, delivery_id: delivery.id, attempt: 1 };
  await ctx.ports.queue.send('webhook-delivery', message);
  await markQueued(delivery.org_id, delivery.id, 1);
}

/**
 * After the transaction that wrote a prepared event: queues it. A failure is logged, not thrown: the
 * change it announces has happened, and the sweeper queues the delivery within a minute or two.
 */
export async function queuePrepared(ctx: RequestContext, event: PreparedEvent): Promise<void> {
  try {
    await queueFirstAttempt(ctx, event.delivery);
  } catch (error) {
    logger.warn('queueing a webhook delivery failed; the sweeper will queue it', {
      orgId: event.delivery.org_id,
      deliveryId: event.delivery.id,
      error: error as Error,
    });
  }
}

/**
 * Sends `type` with `data` to the organization's URL for it, if one is registered; otherwise does
 * nothing and returns undefined. Returns the pending delivery once it is written; its message is
 * queued at once or, should the queue refuse, by the sweeper. For an event that announces a change,
 * prefer `prepareEvent`, which writes the delivery with the change.
 *
 * @example
 * await publishEvent(ctx, orgId, 'agent_error', { agent, error });
 */
export async function publishEvent(
  ctx: RequestContext,
  orgId: string,
  type: WebhookEvent,
  data: Record<string, unknown>,
): Promise<WebhookDelivery | undefined> {
  const event = await prepareEvent(orgId, type, data, ctx.ports.clock.now());
  if (!event) return undefined;
  await putDelivery(event.delivery);
  await queuePrepared(ctx, event);
  return toDelivery(event.delivery);
}

/**
 * Creates the pending delivery record, then queues its first attempt. Should the queue refuse the
 * message, the record is closed as failed (saying why) rather than left pending for ever.
 */
export async function enqueueDelivery(
  ctx: RequestContext,
  orgId: string,
  event: { type: OutboundEventType; url: string; data: Record<string, unknown> },
): Promise<WebhookDelivery> {
  const item = deliveryOf(orgId, event, ctx.ports.clock.now());
  await putDelivery(item);
  try {
    await queueFirstAttempt(ctx, item);
  } catch (error) {
    logger.error('queueing a webhook delivery failed', { orgId, deliveryId: item.id, error: error as Error });
    await failUnqueued(orgId, item.id, ctx.ports.clock.now(), 'the delivery queue refused the message');
    throw error;
  }
  return toDelivery(item);
}

/** A delivery still unqueued this long after it was written has lost its sender. */
export const UNQUEUED_GRACE_MS = 60_000;
/** Deliveries the sweeper queues per run; more wait for the next run. */
const SWEEP_LIMIT = 100;

/**
 * The sweeper: queues the first attempt of every delivery written more than `graceMs` ago whose
 * message was never sent (the process stopped after the commit, or the queue refused). A delivery whose
 * first message did go out but was not marked is queued again, harmlessly: the delivery function sends
 * each attempt once. Answers how many it queued.
 */
export async function requeueUnqueued(ctx: RequestContext, graceMs: number = UNQUEUED_GRACE_MS): Promise<number> {
  const stalled = await unqueuedDeliveryItems(new Date(ctx.ports.clock.now().getTime() - graceMs), SWEEP_LIMIT);
  let queued = 0;
  for (const delivery of stalled) {
    try {
      await queueFirstAttempt(ctx, delivery);
      queued += 1;
    } catch (error) {
      logger.error('the sweeper could not queue a webhook delivery', {
        orgId: delivery.org_id,
        deliveryId: delivery.id,
        error: error as Error,
      });
    }
  }
  if (queued > 0) logger.warn('queued webhook deliveries whose sender had stopped', { queued });
  return queued;
}

/**
 * POST /tenant-config/webhooks/test: a `test` event to the URL of `event`, or of the first event (in
 * the order of WEBHOOK_EVENTS) that has one.
 */
export async function sendTestEvent(
  ctx: RequestContext,
  body: { event?: WebhookEvent | undefined },
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
      { path: 'event', message: `${event} has no registered URL` },
    ]);
  }
  return enqueueDelivery(ctx, principal.orgId, {
    type: 'test',
    url,
    data: {
      event,
      organization_id: principal.orgId,
      message: `A test event for the ${event} webhook, sent on request.`,
    },
  });
}
