import type Stripe from 'stripe';
import {
  customerLink,
  orgIdOfCustomer,
  orgTierUpdate,
  paymentPut,
  subscriptionUpdate,
} from '#lib/billing/billing-records';
import { findPackage, findTier, type TokenPackage } from '#lib/billing/catalogue';
import type { Tier } from '#lib/config';
import type { TransactItem } from '#lib/db/transactions';
import { getOrganizationItem } from '#lib/identity/organizations';
import { getUserItem } from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';
import { ledgerWrites } from '#lib/tokens/ledger';
import type { WebhookAction } from '#lib/webhooks/inbound/receipts';

/**
 * What each payments event changes, as a plan: the writes for the event's one transaction (which also
 * holds the event's seen guard, lib/billing/payments-webhook.ts), the actions the receipt reports and
 * what follows the commit. Reading the event never writes.
 *
 * Handled: checkout.session.completed (tier or token package), invoice.paid, invoice.payment_failed,
 * customer.subscription.updated, customer.subscription.deleted, and payment_intent.succeeded of
 * intents made by POST /billing/create-payment-intent. Other types are acknowledged (200).
 */
export interface Plan {
  orgId?: string;
  writes: TransactItem[];
  actions: WebhookAction[];
  /** Runs after the commit, only the first time (notifications). */
  after?: (ctx: RequestContext) => Promise<void>;
}

type Json = Record<string, unknown>;

const obj = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const str = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
/** Stripe expands some references into objects; either way the id is what is stored. */
const idOf = (value: unknown): string | undefined => str(value) ?? str(obj(value).id);
const isoOf = (seconds: number | undefined): string | null =>
  seconds === undefined ? null : new Date(seconds * 1000).toISOString();
/** The first entry of a Stripe list (`{ data: [...] }`). */
const firstOf = (list: unknown): Json => obj((obj(list).data as unknown[] | undefined)?.[0]);

const ignored = (detail: string): Plan => ({ writes: [], actions: [{ type: 'ignored', detail }] });

export async function planEvent(event: Stripe.Event, now: Date): Promise<Plan> {
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
  const orgId = str(metadata.org_id) ?? (customerId ? str(await orgIdOfCustomer(customerId)) : undefined);
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
  const writes: TransactItem[] = customerId ? [customerLink({ customerId, orgId, now })] : [];

  if (metadata.kind === 'tier') {
    const tier = findTier(str(metadata.tier) ?? '');
    if (!tier) return ignored('The checkout session names no known tier');
    writes.push(
      orgTierUpdate({ orgId, tier: tier.id, now }),
      subscriptionUpdate({
        orgId,
        now,
        fields: {
          tier: tier.id,
          status: 'active',
          customer_id: customerId ?? null,
          subscription_id: idOf(session.subscription) ?? null,
        },
      }),
      paymentPut({
        orgId,
        eventId,
        now,
        payment: {
          product: `tier:${tier.id}`,
          amount_cents: amount,
          currency,
          status: 'paid',
          reference_id: sessionId,
        },
      }),
    );
    return {
      orgId,
      writes,
      actions: [{ type: 'subscription.activated', id: orgId, status: 'active', detail: tier.id }],
    };
  }
  if (metadata.kind === 'package') {
    const deposit = depositPlan({
      orgId,
      eventId,
      slug: str(metadata.package),
      referenceId: sessionId,
      now,
      amount,
      currency,
    });
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
  const deposit = depositPlan({
    orgId,
    eventId,
    slug: str(metadata.package),
    referenceId: str(intent.id) ?? eventId,
    now,
    amount: num(intent.amount_received) ?? num(intent.amount) ?? 0,
    currency: str(intent.currency) ?? 'usd',
  });
  return deposit ? { orgId, ...deposit } : ignored('The payment intent names no known token package');
}

/** A paid token package: its tokens into the ledger, and the payment into the record. */
function depositPlan(input: {
  orgId: string;
  eventId: string;
  slug: string | undefined;
  referenceId: string;
  now: Date;
  amount: number;
  currency: string;
}): Pick<Plan, 'writes' | 'actions'> | undefined {
  const { orgId, eventId, referenceId, now } = input;
  const tokenPackage = findPackage(input.slug ?? '');
  if (!tokenPackage) return undefined;
  return {
    writes: [
      ...ledgerDeposit(orgId, tokenPackage, referenceId, eventId, now),
      paymentPut({
        orgId,
        eventId,
        now,
        payment: {
          product: `package:${tokenPackage.slug}`,
          amount_cents: input.amount,
          currency: input.currency,
          status: 'paid',
          reference_id: referenceId,
          tokens: tokenPackage.tokens,
        },
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

/** The package's tokens as a purchase in the ledger, referenced by the payment that bought them. */
const ledgerDeposit = (
  orgId: string,
  tokenPackage: TokenPackage,
  referenceId: string,
  eventId: string,
  now: Date,
): TransactItem[] =>
  ledgerWrites({
    orgId,
    type: 'purchase',
    amount: tokenPackage.tokens,
    action: 'token_package_purchase',
    referenceId,
    metadata: { package: tokenPackage.slug, event_id: eventId },
    actor: 'system',
    now,
  }).writes;

/** The subscription an invoice belongs to, in the shapes of older and newer Stripe API versions. */
function invoiceSubscription(invoice: Json): { id?: string; metadata: Json } {
  const details = obj(obj(invoice.parent).subscription_details);
  const legacy = obj(invoice.subscription_details);
  return {
    id: idOf(details.subscription) ?? idOf(invoice.subscription),
    metadata: { ...obj(legacy.metadata), ...obj(details.metadata) },
  };
}

async function planInvoice(eventId: string, invoice: Json, now: Date, outcome: 'paid' | 'failed'): Promise<Plan> {
  const subscription = invoiceSubscription(invoice);
  const customerId = idOf(invoice.customer);
  const orgId = await orgOf({ ...obj(invoice.metadata), ...subscription.metadata }, customerId);
  if (!orgId) return ignored('The invoice names no known organization');
  const invoiceId = str(invoice.id) ?? eventId;
  const periodEnd = num(obj(firstOf(invoice.lines).period).end) ?? num(invoice.period_end);
  const amount = outcome === 'paid' ? (num(invoice.amount_paid) ?? 0) : (num(invoice.amount_due) ?? 0);
  const fields =
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
        };
  const writes: TransactItem[] = [
    subscriptionUpdate({ orgId, now, fields }),
    paymentPut({
      orgId,
      eventId,
      now,
      payment: {
        product: subscription.metadata.tier ? `tier:${String(subscription.metadata.tier)}` : 'subscription',
        amount_cents: amount,
        currency: str(invoice.currency) ?? 'usd',
        status: outcome,
        reference_id: invoiceId,
      },
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
  const price = obj(firstOf(subscription.items).price);
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
  const periodEnd = num(firstOf(subscription.items).current_period_end) ?? num(subscription.current_period_end);
  const status = statusOf(subscription.status);
  return {
    orgId,
    writes: [
      orgTierUpdate({ orgId, tier, now }),
      subscriptionUpdate({
        orgId,
        now,
        fields: {
          tier,
          status,
          ...(customerId ? { customer_id: customerId } : {}),
          ...(str(subscription.id) ? { subscription_id: str(subscription.id) } : {}),
          ...(periodEnd ? { current_period_end: isoOf(periodEnd) } : {}),
        },
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
      orgTierUpdate({ orgId, tier: 'free', now }),
      subscriptionUpdate({
        orgId,
        now,
        fields: { tier: 'free', status: 'cancelled', cancelled_at: now.toISOString() },
      }),
    ],
    actions: [{ type: 'subscription.cancelled', id: orgId, status: 'cancelled', detail: 'free' }],
  };
}

async function notifyPaymentFailed(ctx: RequestContext, orgId: string): Promise<void> {
  const org = await getOrganizationItem(orgId);
  const owner = org ? await getUserItem(org.owner_id) : undefined;
  if (!org || !owner) return;
  await ctx.ports.email.send({
    to: owner.email,
    subject: `Payment failed for ${org.name}`,
    text: [
      `The latest subscription payment of ${org.name} failed. The subscription is past due;`,
      'please update the payment method in the billing portal.',
    ].join(' '),
  });
}
