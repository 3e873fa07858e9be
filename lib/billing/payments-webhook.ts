import Stripe from 'stripe';
import { findPackage, findTier } from '#lib/billing/catalogue';
import { billingKeys, SEEN_EVENT_TTL_SECONDS } from '#lib/billing/keys';
import type { Tier } from '#lib/config';
import type { RequestContext } from '#lib/context';
import { table } from '#lib/db/table';
import { itemIsNew, type TransactItem, transact } from '#lib/db/transactions';
import { UnauthorizedError } from '#lib/errors';
import { epochSeconds, identityKeys } from '#lib/identity/keys';
import { getOrganizationItem } from '#lib/identity/organizations';
import { getUserItem } from '#lib/identity/users';
import { logger } from '#lib/logger';
import { ledgerWrites } from '#lib/tokens/ledger';
import { receipt, type WebhookAction, type WebhookReceipt } from '#lib/webhooks/inbound/receipts';

/**
 * POST /billing/webhook and POST /webhooks/payments (one implementation): Stripe events, verified with
 * the stripe library against the webhook secret with a 300 s tolerance. Each event id is processed
 * once: a guard item is put conditionally in the same transaction as every change the event makes, so
 * a redelivery changes nothing and a failure before the commit leaves nothing behind for the retry.
 *
 * Handled: checkout.session.completed (tier or token package), invoice.paid, invoice.payment_failed,
 * customer.subscription.updated, customer.subscription.deleted, and payment_intent.succeeded of
 * intents made by POST /billing/create-payment-intent. Other types are acknowledged (200).
 */

export const SIGNATURE_TOLERANCE_SECONDS = 300;

const INVALID_SIGNATURE = 'Invalid webhook signature';

type Json = Record<string, unknown>;

const obj = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined;
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
/** Stripe expands some references into objects; either way the id is what is stored. */
const idOf = (value: unknown): string | undefined => str(value) ?? str(obj(value).id);
const isoOf = (seconds: number | undefined): string | null =>
  seconds === undefined ? null : new Date(seconds * 1000).toISOString();

/** Verifies the signature and returns the event, or throws the one generic 401. */
export function verifyPaymentsEvent(
  rawBody: string | undefined,
  header: string | undefined,
  secret: string,
  now: Date,
): Stripe.Event {
  if (!rawBody || !header) throw new UnauthorizedError(INVALID_SIGNATURE);
  try {
    return Stripe.webhooks.constructEvent(
      rawBody,
      header,
      secret,
      SIGNATURE_TOLERANCE_SECONDS,
      undefined,
      now.getTime(),
    );
  } catch (error) {
    // The reason is logged (never the body or the header), the caller only learns that it failed.
    logger.warn('payments webhook verification failed', { reason: (error as Error).message });
    throw new UnauthorizedError(INVALID_SIGNATURE);
  }
}

interface Plan {
  orgId?: string;
  writes: TransactItem[];
  actions: WebhookAction[];
  /** Runs after the commit, only the first time (notifications). */
  after?: (ctx: RequestContext) => Promise<void>;
}

export async function receivePaymentsWebhook(
  ctx: RequestContext,
  request: { rawBody: string | undefined; signature: string | undefined; secret: string },
): Promise<WebhookReceipt> {
  const now = ctx.clock.now();
  const event = verifyPaymentsEvent(request.rawBody, request.signature, request.secret, now);
  const plan = await planEvent(event, now);
  if (plan.writes.length === 0) {
    logger.info('payments webhook acknowledged', { event: event.type, event_id: event.id });
    return receipt(event.type, plan.actions);
  }
  const at = now.toISOString();
  const guard: TransactItem = {
    Put: {
      Item: {
        ...billingKeys.seenEvent(event.id),
        event_id: event.id,
        event: event.type,
        org_id: plan.orgId,
        seen_at: at,
        expires_at: epochSeconds(now) + SEEN_EVENT_TTL_SECONDS,
      },
      ConditionExpression: itemIsNew,
    },
  };
  class AlreadySeen extends Error {}
  let duplicate = false;
  try {
    await transact([guard, ...plan.writes], { 0: () => new AlreadySeen() });
  } catch (error) {
    if (!(error instanceof AlreadySeen)) throw error;
    duplicate = true;
  }
  logger.info('payments webhook processed', {
    event: event.type,
    event_id: event.id,
    org_id: plan.orgId,
    duplicate,
    actions: plan.actions.map((action) => action.type),
  });
  if (!duplicate && plan.after) {
    // A notification that fails must not make the provider resend an event already applied.
    await plan
      .after(ctx)
      .catch((error: unknown) => logger.warn('payments webhook follow-up failed', { error: error as Error }));
  }
  return receipt(event.type, plan.actions, duplicate);
}

const ignored = (detail: string): Plan => ({ writes: [], actions: [{ type: 'ignored', detail }] });

async function planEvent(event: Stripe.Event, now: Date): Promise<Plan> {
  const object = obj(event.data?.object);
  switch (event.type) {
    case 'checkout.session.completed':
      return planCheckoutCompleted(event.id, object, now);
    case 'invoice.paid':
      return planInvoice(event.id, object, now, 'paid');
    case 'invoice.payment_failed':
      return planInvoice(event.id, object, now, 'failed');
    case 'customer.subscription.updated':
      return planSubscriptionUpdated(object, now);
    case 'customer.subscription.deleted':
      return planSubscriptionDeleted(object, now);
    case 'payment_intent.succeeded':
      return planIntentSucceeded(event.id, object, now);
    default:
      return ignored(`${event.type} events are not handled`);
  }
}

/** The organization an object belongs to: its metadata, or the customer it was paid by. */
async function orgOf(metadata: Json, customerId: string | undefined): Promise<string | undefined> {
  const fromMetadata = str(metadata.org_id);
  const orgId =
    fromMetadata ??
    (customerId ? str((await table.get({ Key: billingKeys.customer(customerId) })).Item?.org_id) : undefined);
  if (!orgId) return undefined;
  return (await getOrganizationItem(orgId)) ? orgId : undefined;
}

async function planCheckoutCompleted(eventId: string, session: Json, now: Date): Promise<Plan> {
  const metadata = obj(session.metadata);
  const customerId = idOf(session.customer);
  const orgId = await orgOf(metadata, customerId);
  if (!orgId) return ignored('The checkout session names no known organization');
  if (session.payment_status === 'unpaid') {
    return ignored('The checkout session is not paid yet; its payment will be reported separately');
  }
  const amount = num(session.amount_total) ?? 0;
  const currency = str(session.currency) ?? 'usd';
  const sessionId = str(session.id) ?? eventId;
  const writes: TransactItem[] = customerId ? [customerLink(customerId, orgId, now)] : [];

  if (metadata.kind === 'tier') {
    const tier = findTier(str(metadata.tier) ?? '');
    if (!tier) return ignored('The checkout session names no known tier');
    writes.push(
      orgTierUpdate(orgId, tier.id, now),
      subscriptionUpdate(orgId, now, {
        tier: tier.id,
        status: 'active',
        customer_id: customerId ?? null,
        subscription_id: idOf(session.subscription) ?? null,
      }),
      paymentRecord(orgId, eventId, now, {
        product: `tier:${tier.id}`,
        amount_cents: amount,
        currency,
        status: 'paid',
        reference_id: sessionId,
      }),
    );
    return {
      orgId,
      writes,
      actions: [{ type: 'subscription.activated', id: orgId, status: 'active', detail: tier.id }],
    };
  }
  if (metadata.kind === 'package') {
    const deposit = depositPlan(orgId, eventId, str(metadata.package), sessionId, now, amount, currency);
    if (!deposit) return ignored('The checkout session names no known token package');
    return { orgId, writes: [...writes, ...deposit.writes], actions: deposit.actions };
  }
  return ignored('The checkout session is neither a tier nor a token package purchase');
}

async function planIntentSucceeded(eventId: string, intent: Json, now: Date): Promise<Plan> {
  const metadata = obj(intent.metadata);
  // Checkout's own payment intents are deposited by checkout.session.completed.
  if (metadata.source !== 'payment_intent') {
    return ignored('Only payment intents of POST /billing/create-payment-intent deposit tokens here');
  }
  const orgId = await orgOf(metadata, idOf(intent.customer));
  if (!orgId) return ignored('The payment intent names no known organization');
  const amount = num(intent.amount_received) ?? num(intent.amount) ?? 0;
  const deposit = depositPlan(
    orgId,
    eventId,
    str(metadata.package),
    str(intent.id) ?? eventId,
    now,
    amount,
    str(intent.currency) ?? 'usd',
  );
  return deposit ? { orgId, ...deposit } : ignored('The payment intent names no known token package');
}

function depositPlan(
  orgId: string,
  eventId: string,
  slug: string | undefined,
  referenceId: string,
  now: Date,
  amount: number,
  currency: string,
): { writes: TransactItem[]; actions: WebhookAction[] } | undefined {
  const tokenPackage = findPackage(slug ?? '');
  if (!tokenPackage) return undefined;
  return {
    writes: [
      ...ledgerWrites({
        orgId,
        type: 'purchase',
        amount: tokenPackage.tokens,
        action: 'token_package_purchase',
        referenceId,
        metadata: { package: tokenPackage.slug, event_id: eventId },
        actor: 'system',
        now,
      }).writes,
      paymentRecord(orgId, eventId, now, {
        product: `package:${tokenPackage.slug}`,
        amount_cents: amount,
        currency,
        status: 'paid',
        reference_id: referenceId,
        tokens: tokenPackage.tokens,
      }),
    ],
    actions: [
      {
        type: 'tokens.deposited',
        id: orgId,
        detail: `${tokenPackage.tokens} tokens (${tokenPackage.slug})`,
      },
    ],
  };
}

/** The subscription an invoice belongs to, in the shapes of older and newer Stripe API versions. */
function invoiceSubscription(invoice: Json): { id?: string; metadata: Json } {
  const details = obj(obj(invoice.parent).subscription_details);
  const legacy = obj(invoice.subscription_details);
  return {
    id: idOf(details.subscription) ?? idOf(invoice.subscription),
    metadata: { ...obj(legacy.metadata), ...obj(details.metadata) },
  };
}

async function planInvoice(
  eventId: string,
  invoice: Json,
  now: Date,
  outcome: 'paid' | 'failed',
): Promise<Plan> {
  const subscription = invoiceSubscription(invoice);
  const customerId = idOf(invoice.customer);
  const orgId = await orgOf({ ...obj(invoice.metadata), ...subscription.metadata }, customerId);
  if (!orgId) return ignored('The invoice names no known organization');
  const invoiceId = str(invoice.id) ?? eventId;
  const line = obj((obj(invoice.lines).data as unknown[] | undefined)?.[0]);
  const periodEnd = num(obj(line.period).end) ?? num(invoice.period_end);
  const amount = outcome === 'paid' ? (num(invoice.amount_paid) ?? 0) : (num(invoice.amount_due) ?? 0);
  const writes: TransactItem[] = [
    subscriptionUpdate(
      orgId,
      now,
      outcome === 'paid'
        ? {
            status: 'active',
            last_invoice_id: invoiceId,
            last_paid_at: now.toISOString(),
            ...(periodEnd ? { current_period_end: isoOf(periodEnd) } : {}),
            ...(customerId ? { customer_id: customerId } : {}),
            ...(subscription.id ? { subscription_id: subscription.id } : {}),
          }
        : {
            status: 'past_due',
            last_invoice_id: invoiceId,
            payment_failed_at: now.toISOString(),
            ...(customerId ? { customer_id: customerId } : {}),
          },
    ),
    paymentRecord(orgId, eventId, now, {
      product: subscription.metadata.tier ? `tier:${String(subscription.metadata.tier)}` : 'subscription',
      amount_cents: amount,
      currency: str(invoice.currency) ?? 'usd',
      status: outcome,
      reference_id: invoiceId,
    }),
  ];
  if (outcome === 'paid') {
    return { orgId, writes, actions: [{ type: 'subscription.renewed', id: orgId, status: 'active' }] };
  }
  return {
    orgId,
    writes,
    actions: [
      { type: 'subscription.past_due', id: orgId, status: 'past_due' },
      { type: 'owner.notified', id: orgId },
    ],
    after: (ctx) => notifyPaymentFailed(ctx, orgId),
  };
}

/** The tier a subscription is for: its metadata, else its price's lookup key or metadata. */
function subscriptionTier(subscription: Json): Tier | undefined {
  const price = obj(obj((obj(subscription.items).data as unknown[] | undefined)?.[0]).price);
  const candidates = [
    obj(subscription.metadata).tier,
    price.lookup_key,
    obj(price.metadata).tier,
    obj(obj(price.product).metadata).tier,
  ];
  for (const candidate of candidates) {
    const tier = findTier(str(candidate) ?? '');
    if (tier) return tier.id;
  }
  return undefined;
}

/** Stripe's statuses, as the subscription record keeps them (`canceled` is spelled `cancelled` here). */
const statusOf = (status: unknown): string => {
  const value = str(status) ?? 'active';
  return value === 'canceled' ? 'cancelled' : value;
};

async function planSubscriptionUpdated(subscription: Json, now: Date): Promise<Plan> {
  const customerId = idOf(subscription.customer);
  const orgId = await orgOf(obj(subscription.metadata), customerId);
  if (!orgId) return ignored('The subscription names no known organization');
  const tier = subscriptionTier(subscription);
  if (!tier) return ignored('The subscription names no known tier');
  const item = obj((obj(subscription.items).data as unknown[] | undefined)?.[0]);
  const periodEnd = num(item.current_period_end) ?? num(subscription.current_period_end);
  const status = statusOf(subscription.status);
  return {
    orgId,
    writes: [
      orgTierUpdate(orgId, tier, now),
      subscriptionUpdate(orgId, now, {
        tier,
        status,
        ...(customerId ? { customer_id: customerId } : {}),
        ...(str(subscription.id) ? { subscription_id: str(subscription.id) } : {}),
        ...(periodEnd ? { current_period_end: isoOf(periodEnd) } : {}),
      }),
    ],
    actions: [{ type: 'tier.updated', id: orgId, status, detail: tier }],
  };
}

async function planSubscriptionDeleted(subscription: Json, now: Date): Promise<Plan> {
  const orgId = await orgOf(obj(subscription.metadata), idOf(subscription.customer));
  if (!orgId) return ignored('The subscription names no known organization');
  return {
    orgId,
    writes: [
      orgTierUpdate(orgId, 'free', now),
      subscriptionUpdate(orgId, now, { tier: 'free', status: 'cancelled', cancelled_at: now.toISOString() }),
    ],
    actions: [{ type: 'subscription.cancelled', id: orgId, status: 'cancelled', detail: 'free' }],
  };
}

export function orgTierUpdate(orgId: string, tier: Tier, now: Date): TransactItem {
  return {
    Update: {
      Key: identityKeys.organization(orgId),
      UpdateExpression: 'SET tier = :tier, updated_at = :now',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted_at)',
      ExpressionAttributeValues: { ':tier': tier, ':now': now.toISOString() },
    },
  };
}

/** Sets the given fields of the subscription record, creating it when there is none yet. */
export function subscriptionUpdate(orgId: string, now: Date, fields: Record<string, unknown>): TransactItem {
  const all: Record<string, unknown> = { ...fields, org_id: orgId, updated_at: now.toISOString() };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':created': now.toISOString() };
  const sets = Object.entries(all).map(([field, value], index) => {
    names[`#f${index}`] = field;
    values[`:v${index}`] = value;
    return `#f${index} = :v${index}`;
  });
  return {
    Update: {
      Key: billingKeys.subscription(orgId),
      UpdateExpression: `SET ${sets.join(', ')}, created_at = if_not_exists(created_at, :created)`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

function paymentRecord(
  orgId: string,
  eventId: string,
  now: Date,
  payment: {
    product: string;
    amount_cents: number;
    currency: string;
    status: 'paid' | 'failed';
    reference_id: string;
    tokens?: number;
  },
): TransactItem {
  const at = now.toISOString();
  return {
    Put: {
      Item: {
        ...billingKeys.payment(orgId, at, eventId),
        org_id: orgId,
        event_id: eventId,
        ...payment,
        created_at: at,
      },
    },
  };
}

function customerLink(customerId: string, orgId: string, now: Date): TransactItem {
  return {
    Put: {
      Item: {
        ...billingKeys.customer(customerId),
        customer_id: customerId,
        org_id: orgId,
        linked_at: now.toISOString(),
      },
    },
  };
}

async function notifyPaymentFailed(ctx: RequestContext, orgId: string): Promise<void> {
  const org = await getOrganizationItem(orgId);
  const owner = org ? await getUserItem(org.owner_id) : undefined;
  if (!org || !owner) return;
  await ctx.email.send({
    to: owner.email,
    subject: `Payment failed for ${org.name}`,
    text:
      `The latest subscription payment of ${org.name} failed. The subscription is past due; please update the ` +
      'payment method in the billing portal.',
  });
}
