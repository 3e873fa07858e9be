import * as z from 'zod';
import { randomBase62 } from '#lib/crypto/secrets';
import { allOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { type TableKey, tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { isConditionFailed, table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { DELIVERY_ID_PATTERN, type DeliveryStatus, type OutboundEventType } from '#lib/webhooks/outbound/event-types';

/**
 * The delivery log: one record per outbound webhook message, under its organization, with every
 * attempt appended to it.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | delivery | `T#<org>` | `WEBHOOKDELIVERY#<id>` | ids begin with the creation time (sorted by age); TTL |
 * | … while unqueued | gsi1: `WEBHOOKDELIVERY#UNQUEUED` | `<created_at>#<org>#<id>` | the sweeper's index |
 *
 * A delivery is written before its first queue message is sent (often in the transaction of the change
 * it announces), so until that message is on the queue it stays in the unqueued index, where the
 * sweeper (`requeueUnqueued`) finds it should the sender have stopped in between.
 *
 * Each attempt is claimed and then recorded with conditions on `attempt_count`, so that a queue message
 * delivered twice (SQS delivers at least once) neither sends the request twice nor logs it twice.
 */
export const deliveryKeys = {
  byId: (orgId: string, id: string): TableKey => ({ pk: tenantPk(orgId), sk: `WEBHOOKDELIVERY#${id}` }),
  prefix: 'WEBHOOKDELIVERY#',
  unqueuedPk: 'WEBHOOKDELIVERY#UNQUEUED',
  unqueuedSort: (createdAt: string, orgId: string, id: string): string => `${createdAt}#${orgId}#${id}`,
};

/** Delivery records are kept this long (the table's TTL removes them), so a tenant's log stays bounded. */
export const DELIVERY_RETENTION_DAYS = 30;

export interface DeliveryAttempt {
  at: string;
  /** Null when no HTTP response arrived (refused target, DNS or connection failure, timeout). */
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export interface DeliveryItem {
  pk: string;
  sk: string;
  id: string;
  org_id: string;
  event_type: OutboundEventType;
  url: string;
  /** The exact request body, sent unchanged on every attempt (only the signature's timestamp changes). */
  payload: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  expires_at: number;
  /** Epoch ms until which a consumer holds the next attempt (see claimAttempt). */
  claim_expires_at?: number;
  /** The highest attempt number whose queue message has been sent. */
  queued_attempt?: number;
  /** Present until the first attempt's message is queued (the unqueued index). */
  gsi1pk?: string;
  gsi1sk?: string;
}

export interface WebhookDelivery {
  id: string;
  event_type: OutboundEventType;
  url: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

export const toDelivery = (item: DeliveryItem): WebhookDelivery => ({
  id: item.id,
  event_type: item.event_type,
  url: item.url,
  status: item.status,
  attempts: item.attempts ?? [],
  next_attempt_at: item.next_attempt_at ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
});

/** The body of a queue message: which delivery, and which attempt this message is for. */
export const DeliveryMessage = z.object({
  org_id: z.string().min(1).max(128),
  delivery_id: z.string().regex(DELIVERY_ID_PATTERN),
  attempt: z.number().int().min(1).max(100),
});
export type DeliveryMessage = z.infer<typeof DeliveryMessage>;

/** `msg_` + creation time (base36 ms, fixed width so it sorts) + 14 random characters. */
export const newDeliveryId = (now: Date): string =>
  `msg_${now.getTime().toString(36).padStart(9, '0')}${randomBase62(14)}`;

const stillPending = '#status = :pending';
const atAttempt = 'attempt_count = :previous';
const unclaimed = 'attribute_not_exists(claim_expires_at) OR claim_expires_at < :nowMs';
const notYetQueued = 'attribute_not_exists(queued_attempt) OR queued_attempt < :attempt';

/** Whether `write` was refused for `reason`; any other failure is thrown. */
const refused = async (write: Promise<unknown>, reason: string): Promise<boolean> => {
  try {
    await write;
    return false;
  } catch (error) {
    if (isConditionFailed(error, reason)) return true;
    throw error;
  }
};

export interface NewDelivery {
  orgId: string;
  type: OutboundEventType;
  url: string;
  payload: string;
  now: Date;
}

/** A pending delivery record, in the unqueued index until its first message is sent. */
export function newDeliveryItem(input: NewDelivery): DeliveryItem {
  const at = input.now.toISOString();
  const id = newDeliveryId(input.now);
  const item: DeliveryItem = {
    ...deliveryKeys.byId(input.orgId, id),
    id,
    org_id: input.orgId,
    event_type: input.type,
    url: input.url,
    payload: input.payload,
    status: 'pending',
    attempts: [],
    attempt_count: 0,
    next_attempt_at: at,
    created_at: at,
    updated_at: at,
    expires_at: Math.floor(input.now.getTime() / 1000) + DELIVERY_RETENTION_DAYS * 86_400,
    gsi1pk: deliveryKeys.unqueuedPk,
    gsi1sk: deliveryKeys.unqueuedSort(at, input.orgId, id),
  };
  return item;
}

/** The Put that writes a new delivery, for a transaction of its own or of the change it announces. */
export const deliveryPut = (item: DeliveryItem): TransactItem => ({
  Put: { Item: item, ConditionExpression: itemIsNew },
});

/** Writes a new delivery on its own. */
export async function putDelivery(item: DeliveryItem): Promise<void> {
  await table.put({ Item: item, ConditionExpression: itemIsNew });
}

/**
 * Deliveries written before `createdBefore` whose first message was never queued, oldest first, at
 * most `limit`. One Query of the unqueued index, which holds only such deliveries (a few, briefly).
 */
export async function unqueuedDeliveryItems(createdBefore: Date, limit: number): Promise<DeliveryItem[]> {
  const result = await table.query({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
    ExpressionAttributeValues: { ':pk': deliveryKeys.unqueuedPk, ':before': createdBefore.toISOString() },
    Limit: limit,
  });
  return (result.Items ?? []) as DeliveryItem[];
}

export async function getDeliveryItem(orgId: string, id: string): Promise<DeliveryItem | undefined> {
  const result = await table.get({ Key: deliveryKeys.byId(orgId, id), ConsistentRead: true });
  return result.Item as DeliveryItem | undefined;
}

/** The organization's deliveries, newest first, optionally of one status; payloads are not read. */
export async function listDeliveryItems(
  orgId: string,
  page: PageRequest,
  status?: DeliveryStatus,
): Promise<Page<DeliveryItem>> {
  return queryPage<DeliveryItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': deliveryKeys.prefix },
      ExpressionAttributeNames: { '#status': 'status', '#url': 'url' },
      ProjectionExpression: 'id, event_type, #url, #status, attempts, next_attempt_at, created_at, updated_at',
      ScanIndexForward: false,
    },
    page,
    (item) => status === undefined || item.status === status,
  );
}

/**
 * Takes attempt `attempt` for this consumer until `leaseMs` from now: only while the delivery is
 * pending, the previous attempt is the last one recorded, and no other consumer holds an unexpired
 * claim. The lease outlasts one attempt (timeout included) and is shorter than the queue's visibility
 * timeout, so a consumer that dies mid-attempt is replaced when the message reappears. False when the
 * claim was not taken.
 */
export async function claimAttempt(input: {
  orgId: string;
  id: string;
  attempt: number;
  now: Date;
  leaseMs: number;
}): Promise<boolean> {
  const taken = await refused(
    table.update({
      Key: deliveryKeys.byId(input.orgId, input.id),
      UpdateExpression: 'SET claim_expires_at = :until',
      ConditionExpression: allOf(stillPending, atAttempt, unclaimed),
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':pending': 'pending',
        ':previous': input.attempt - 1,
        ':nowMs': input.now.getTime(),
        ':until': input.now.getTime() + input.leaseMs,
      },
      reason: 'attempt-taken',
    }),
    'attempt-taken',
  );
  return !taken;
}

/**
 * Appends attempt `attempt` and sets the outcome, releasing the claim. The condition on the attempt
 * count makes the append happen once per attempt number. False when another consumer got there first.
 */
export async function recordAttempt(input: {
  orgId: string;
  id: string;
  attempt: number;
  result: DeliveryAttempt;
  status: DeliveryStatus;
  nextAttemptAt: string | null;
  now: Date;
}): Promise<boolean> {
  const recordedBefore = await refused(
    table.update({
      Key: deliveryKeys.byId(input.orgId, input.id),
      UpdateExpression: [
        'SET attempts = list_append(attempts, :attempt), attempt_count = :count, #status = :status',
        'next_attempt_at = :next, updated_at = :at REMOVE claim_expires_at, gsi1pk, gsi1sk',
      ].join(', '),
      ConditionExpression: allOf(stillPending, atAttempt),
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':pending': 'pending',
        ':previous': input.attempt - 1,
        ':count': input.attempt,
        ':attempt': [input.result],
        ':status': input.status,
        ':next': input.nextAttemptAt,
        ':at': input.now.toISOString(),
      },
      reason: 'attempt-recorded',
    }),
    'attempt-recorded',
  );
  return !recordedBefore;
}

/**
 * Notes that the message for `attempt` is on the queue, so that a redelivered message does not send it
 * again, and takes the delivery out of the unqueued index.
 */
export async function markQueued(orgId: string, id: string, attempt: number): Promise<void> {
  // Refused when the delivery is gone or a later attempt is already marked: nothing to note then.
  await refused(
    table.update({
      Key: deliveryKeys.byId(orgId, id),
      UpdateExpression: 'SET queued_attempt = :attempt REMOVE gsi1pk, gsi1sk',
      ConditionExpression: allOf(itemExists, notYetQueued),
      ExpressionAttributeValues: { ':attempt': attempt },
      reason: 'already-queued',
    }),
    'already-queued',
  );
}

/**
 * Ends a pending delivery as failed with a log entry `error` for an attempt that was never sent: on
 * condition that no attempt was recorded since `attemptCount` was read and no consumer holds one (that
 * consumer records its own). False when either happened.
 */
export async function recordUnsent(input: {
  orgId: string;
  id: string;
  attemptCount: number;
  now: Date;
  error: string;
}): Promise<boolean> {
  const moved = await refused(
    table.update({
      Key: deliveryKeys.byId(input.orgId, input.id),
      UpdateExpression: [
        'SET attempts = list_append(attempts, :attempt), attempt_count = :count, #status = :failed',
        'next_attempt_at = :next, updated_at = :at REMOVE claim_expires_at, gsi1pk, gsi1sk',
      ].join(', '),
      ConditionExpression: allOf(stillPending, atAttempt, unclaimed),
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':pending': 'pending',
        ':failed': 'failed',
        ':previous': input.attemptCount,
        ':count': input.attemptCount + 1,
        ':attempt': [{ at: input.now.toISOString(), status_code: null, duration_ms: 0, error: input.error }],
        ':next': null,
        ':at': input.now.toISOString(),
        ':nowMs': input.now.getTime(),
      },
      reason: 'delivery-moved',
    }),
    'delivery-moved',
  );
  return !moved;
}

/** Ends a delivery whose first message could not be queued, saying so in its log. */
export async function failUnqueued(orgId: string, id: string, now: Date, error: string): Promise<void> {
  await recordAttempt({
    orgId,
    id,
    attempt: 1,
    result: { at: now.toISOString(), status_code: null, duration_ms: 0, error: `not sent: ${error}` },
    status: 'failed',
    nextAttemptAt: null,
    now,
  });
}

/** GET /tenant-config/webhook-deliveries: the caller's organization's deliveries, newest first. */
export async function listWebhookDeliveries(
  ctx: RequestContext,
  query: PageRequest & { status?: DeliveryStatus },
): Promise<Page<WebhookDelivery>> {
  const principal = requirePrincipal(ctx);
  const page = await listDeliveryItems(principal.orgId, query, query.status);
  return { items: page.items.map(toDelivery), total: page.total };
}

/** GET /tenant-config/webhook-deliveries/{id}: one delivery with the body it sends; another organization's is 404. */
export async function getWebhookDelivery(
  ctx: RequestContext,
  id: string,
): Promise<WebhookDelivery & { payload: unknown }> {
  const principal = requirePrincipal(ctx);
  const item = await getDeliveryItem(principal.orgId, id);
  if (!item) throw new NotFoundError('Webhook delivery not found');
  return { ...toDelivery(item), payload: JSON.parse(item.payload) };
}
