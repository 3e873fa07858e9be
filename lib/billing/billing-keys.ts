import { findTier } from '#lib/billing/catalogue';
import type { Tier } from '#lib/config';
import { type TableKey, tenantPk } from '#lib/db/keys';
import type { CheckoutSession, PaymentIntent } from '#lib/kernel/ports';

/**
 * Where billing records live in the table, and their item types (access patterns:
 * lib/billing/billing-records.ts).
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | subscription | `T#<org>` | `SUBSCRIPTION` | one per organization |
 * | auto top-up settings | `T#<org>` | `AUTOTOPUP` | |
 * | payment (paid or failed) | `T#<org>` | `PAYMENT#<time>#<event id>` | what GET /billing/overview sums |
 * | payment intent by idempotency key | `T#<org>` | `PAYMENTINTENT#<sha256 key>` | TTL 1 day |
 * | checkout session | `CHECKOUTSESSION#<id>` | `CHECKOUTSESSION` | TTL 1 day; the local checkout page reads it |
 * | customer → organization | `PAYCUSTOMER#<customer id>` | `PAYCUSTOMER` | for events without org metadata |
 * | processed webhook event | `PAYMENTSEEN#<event id>` | `PAYMENTSEEN` | TTL 30 days |
 */
export const billingKeys = {
  subscription: (orgId: string): TableKey => ({ pk: tenantPk(orgId), sk: 'SUBSCRIPTION' }),
  autoTopup: (orgId: string): TableKey => ({ pk: tenantPk(orgId), sk: 'AUTOTOPUP' }),
  payment: (orgId: string, at: string, eventId: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `PAYMENT#${at}#${eventId}`,
  }),
  paymentsPrefix: 'PAYMENT#',
  paymentIntent: (orgId: string, keyHash: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `PAYMENTINTENT#${keyHash}`,
  }),
  checkoutSession: (sessionId: string): TableKey => ({
    pk: `CHECKOUTSESSION#${sessionId}`,
    sk: 'CHECKOUTSESSION',
  }),
  customer: (customerId: string): TableKey => ({ pk: `PAYCUSTOMER#${customerId}`, sk: 'PAYCUSTOMER' }),
  seenEvent: (eventId: string): TableKey => ({ pk: `PAYMENTSEEN#${eventId}`, sk: 'PAYMENTSEEN' }),
};

/** Stripe retries an event for up to three days; a month of remembered ids covers every retry. */
export const SEEN_EVENT_TTL_SECONDS = 30 * 24 * 60 * 60;
export const SESSION_TTL_SECONDS = 24 * 60 * 60;

/** The subscription record: written field by field, by plan changes and the payments webhook. */
export interface SubscriptionItem extends TableKey {
  org_id: string;
  tier: string;
  status?: string;
  customer_id?: string | null;
  subscription_id?: string | null;
  current_period_end?: string | null;
  last_invoice_id?: string;
  last_paid_at?: string;
  payment_failed_at?: string;
  cancelled_at?: string;
  created_at: string;
  updated_at: string;
}

export interface Subscription {
  org_id: string;
  tier: Tier;
  status: string;
  customer_id: string | null;
  subscription_id: string | null;
  current_period_end: string | null;
  created_at: string;
  updated_at: string;
}

/** The record as the API shows it; a tier the catalogue no longer knows reads as the organization's. */
export const toSubscription = (item: SubscriptionItem, fallbackTier: Tier): Subscription => ({
  org_id: String(item.org_id),
  tier: findTier(String(item.tier))?.id ?? fallbackTier,
  status: String(item.status ?? 'active'),
  customer_id: item.customer_id ?? null,
  subscription_id: item.subscription_id ?? null,
  current_period_end: item.current_period_end ?? null,
  created_at: String(item.created_at),
  updated_at: String(item.updated_at),
});

export interface AutoTopupItem extends TableKey {
  org_id: string;
  enabled: boolean;
  threshold: number;
  package_slug: string;
  updated_at: string;
  /** `user:<id>` or `api_key:<id>`. */
  updated_by: string;
}

/** A payment the payments webhook reported, paid or failed. */
export interface PaymentItem extends TableKey {
  org_id: string;
  event_id: string;
  /** `tier:<id>`, `package:<slug>` or `subscription`. */
  product: string;
  amount_cents: number;
  currency: string;
  status: 'paid' | 'failed';
  reference_id: string;
  tokens?: number;
  created_at: string;
}

/** What POST /billing/create-payment-intent answers; kept per idempotency key. */
export interface PaymentIntentResult extends PaymentIntent {
  package_slug: string;
  tokens: number;
  idempotency_key: string;
}

export interface PaymentIntentItem extends TableKey {
  package_slug: string;
  intent: PaymentIntentResult;
  created_at: string;
  expires_at: number;
}

/** What POST /billing/checkout answers: the provider's session and what it sells. */
export interface CheckoutResult extends CheckoutSession {
  kind: 'tier' | 'package';
  tier: string | null;
  package: string | null;
}

/** A checkout session as started: remembered for the local checkout page and as a trace. */
export interface CheckoutSessionItem extends TableKey, CheckoutResult {
  org_id: string;
  provider: 'stripe' | 'local';
  success_url: string;
  created_at: string;
  expires_at: number;
}

export interface CustomerItem extends TableKey {
  customer_id: string;
  org_id: string;
  linked_at: string;
}

export interface SeenEventItem extends TableKey {
  event_id: string;
  event: string;
  org_id: string | undefined;
  seen_at: string;
  expires_at: number;
}
