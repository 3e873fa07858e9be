import { tenantPk } from '#lib/db/keys';

/**
 * Where billing records live in the table.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | subscription | `T#<org>` | `SUBSCRIPTION` | one per organization |
 * | auto top-up settings | `T#<org>` | `AUTOTOPUP` | |
 * | payment (paid or failed) | `T#<org>` | `PAYMENT#<time>#<event id>` | what GET /billing/overview sums |
 * | payment intent by idempotency key | `T#<org>` | `PAYMENTINTENT#<sha256 key>` | TTL 1 day |
 * | checkout session | `CHECKOUTSESSION#<id>` | `CHECKOUTSESSION` | TTL 1 day; the local checkout page reads it |
 * | customer → organization | `PAYCUSTOMER#<customer id>` | `PAYCUSTOMER` | for events that carry no org metadata |
 * | processed webhook event | `PAYMENTSEEN#<event id>` | `PAYMENTSEEN` | TTL 30 days |
 */
export const billingKeys = {
  subscription: (orgId: string) => ({ pk: tenantPk(orgId), sk: 'SUBSCRIPTION' }),
  autoTopup: (orgId: string) => ({ pk: tenantPk(orgId), sk: 'AUTOTOPUP' }),
  payment: (orgId: string, at: string, eventId: string) => ({
    pk: tenantPk(orgId),
    sk: `PAYMENT#${at}#${eventId}`,
  }),
  paymentIntent: (orgId: string, keyHash: string) => ({
    pk: tenantPk(orgId),
    sk: `PAYMENTINTENT#${keyHash}`,
  }),
  checkoutSession: (sessionId: string) => ({ pk: `CHECKOUTSESSION#${sessionId}`, sk: 'CHECKOUTSESSION' }),
  customer: (customerId: string) => ({ pk: `PAYCUSTOMER#${customerId}`, sk: 'PAYCUSTOMER' }),
  seenEvent: (eventId: string) => ({ pk: `PAYMENTSEEN#${eventId}`, sk: 'PAYMENTSEEN' }),
};

/** Stripe retries an event for up to three days; a month of remembered ids covers every retry. */
export const SEEN_EVENT_TTL_SECONDS = 30 * 24 * 60 * 60;
export const SESSION_TTL_SECONDS = 24 * 60 * 60;
