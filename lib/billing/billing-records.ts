import {
  type AutoTopupItem,
  billingKeys,
  type CheckoutSessionItem,
  type CustomerItem,
  type PaymentIntentItem,
  type PaymentItem,
  SEEN_EVENT_TTL_SECONDS,
  type SeenEventItem,
  type SubscriptionItem,
} from '#lib/billing/billing-keys';
import type { Tier } from '#lib/config';
import { allOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { epochSeconds, identityKeys } from '#lib/identity/keys';

/**
 * The access patterns of billing records (keys and item types: lib/billing/billing-keys.ts). Reads
 * answer items; writes that belong in a caller's transaction are answered as TransactItems.
 */

/** The organization is not being deleted: a paid tier never lands on an organization on its way out. */
const orgNotDeleted = 'attribute_not_exists(deleted_at)';
/** The organization still has the tier a plan change read: a change in between makes its checks stale. */
const tierIs = 'tier = :from';

export async function getSubscriptionItem(orgId: string): Promise<SubscriptionItem | undefined> {
  const { Item } = await table.get({ Key: billingKeys.subscription(orgId), ConsistentRead: true });
  return Item as SubscriptionItem | undefined;
}

/**
 * Sets the given fields of the subscription record, creating it when there is none yet.
 *
 * @example
 * writes.push(subscriptionUpdate({ orgId, now, fields: { tier: 'pro', status: 'active' } }));
 */
export function subscriptionUpdate(input: {
  orgId: string;
  now: Date;
  fields: Partial<Omit<SubscriptionItem, 'pk' | 'sk' | 'org_id' | 'created_at' | 'updated_at'>>;
}): TransactItem {
  const all: Record<string, unknown> = {
    ...input.fields,
    org_id: input.orgId,
    updated_at: input.now.toISOString(),
  };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':created': input.now.toISOString() };
  const sets = Object.entries(all).map(([field, value], index) => {
    names[`#f${index}`] = field;
    values[`:v${index}`] = value;
    return `#f${index} = :v${index}`;
  });
  return {
    Update: {
      Key: billingKeys.subscription(input.orgId),
      UpdateExpression: `SET ${sets.join(', ')}, created_at = if_not_exists(created_at, :created)`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Sets the organization's tier. With `from`, only while the tier is still that one (reason
 * `tier-changed`); without, only while the organization exists and is not being deleted.
 */
export function orgTierUpdate(input: { orgId: string; tier: Tier; now: Date; from?: Tier }): TransactItem {
  const values: Record<string, unknown> = { ':tier': input.tier, ':now': input.now.toISOString() };
  if (input.from !== undefined) values[':from'] = input.from;
  return {
    Update: {
      Key: identityKeys.organization(input.orgId),
      UpdateExpression: 'SET tier = :tier, updated_at = :now',
      ConditionExpression: allOf(itemExists, input.from === undefined ? orgNotDeleted : tierIs),
      ExpressionAttributeValues: values,
    },
    reason: input.from === undefined ? 'organization-gone' : 'tier-changed',
  };
}

export async function getAutoTopupItem(orgId: string): Promise<AutoTopupItem | undefined> {
  const { Item } = await table.get({ Key: billingKeys.autoTopup(orgId) });
  return Item as AutoTopupItem | undefined;
}

export async function putAutoTopupItem(settings: Omit<AutoTopupItem, 'pk' | 'sk'>): Promise<void> {
  await table.put({ Item: { ...billingKeys.autoTopup(settings.org_id), ...settings } });
}

/** The record of a payment the payments webhook reported, for that event's transaction. */
export function paymentPut(input: {
  orgId: string;
  eventId: string;
  now: Date;
  payment: Pick<PaymentItem, 'product' | 'amount_cents' | 'currency' | 'status' | 'reference_id' | 'tokens'>;
}): TransactItem {
  const at = input.now.toISOString();
  return {
    Put: {
      Item: {
        ...billingKeys.payment(input.orgId, at, input.eventId),
        org_id: input.orgId,
        event_id: input.eventId,
        ...input.payment,
        created_at: at,
      },
    },
  };
}

/** Every payment of the organization, all time (one Query, page after page). */
export async function allPayments(orgId: string): Promise<PaymentItem[]> {
  const items: PaymentItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': billingKeys.paymentsPrefix },
      ExclusiveStartKey: startKey,
    });
    items.push(...((page.Items ?? []) as PaymentItem[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

export async function getPaymentIntentItem(key: {
  orgId: string;
  keyHash: string;
}): Promise<PaymentIntentItem | undefined> {
  const { Item } = await table.get({
    Key: billingKeys.paymentIntent(key.orgId, key.keyHash),
    ConsistentRead: true,
  });
  return Item as PaymentIntentItem | undefined;
}

/** Keeps the first answer of an idempotency key; refused with reason `intent-exists` when one is kept. */
export async function putPaymentIntentItem(
  key: { orgId: string; keyHash: string },
  record: Omit<PaymentIntentItem, 'pk' | 'sk'>,
): Promise<void> {
  await table.put({
    Item: { ...billingKeys.paymentIntent(key.orgId, key.keyHash), ...record },
    ConditionExpression: itemIsNew,
    reason: 'intent-exists',
  });
}

export async function putCheckoutSession(session: Omit<CheckoutSessionItem, 'pk' | 'sk'>): Promise<void> {
  await table.put({ Item: { ...billingKeys.checkoutSession(session.id), ...session } });
}

export async function getCheckoutSession(sessionId: string): Promise<CheckoutSessionItem | undefined> {
  const { Item } = await table.get({ Key: billingKeys.checkoutSession(sessionId) });
  return Item as CheckoutSessionItem | undefined;
}

/** Remembers which organization a provider customer pays for, for events that carry no org metadata. */
export function customerLink(input: { customerId: string; orgId: string; now: Date }): TransactItem {
  const item: CustomerItem = {
    ...billingKeys.customer(input.customerId),
    customer_id: input.customerId,
    org_id: input.orgId,
    linked_at: input.now.toISOString(),
  };
  return { Put: { Item: item } };
}

export async function orgIdOfCustomer(customerId: string): Promise<string | undefined> {
  const { Item } = await table.get({ Key: billingKeys.customer(customerId) });
  return (Item as CustomerItem | undefined)?.org_id;
}

/** The guard that lets a payments event change things once; refused with reason `seen` on a redelivery. */
export function seenEventGuard(input: {
  eventId: string;
  event: string;
  orgId: string | undefined;
  now: Date;
}): TransactItem {
  const item: SeenEventItem = {
    ...billingKeys.seenEvent(input.eventId),
    event_id: input.eventId,
    event: input.event,
    org_id: input.orgId,
    seen_at: input.now.toISOString(),
    expires_at: epochSeconds(input.now) + SEEN_EVENT_TTL_SECONDS,
  };
  return { Put: { Item: item, ConditionExpression: itemIsNew }, reason: 'seen' };
}
