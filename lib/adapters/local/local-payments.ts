import { createHash } from 'node:crypto';
import type { Clock, PaymentsProvider } from '#lib/kernel/ports';

/**
 * The payments provider of local mode and tests: no network, ids derived from their inputs. A checkout
 * `url` points at the service's own local checkout page (`GET /billing/local-checkout/{id}`), whose
 * confirm button sends a signed `checkout.session.completed` to the payments webhook code, so the whole
 * purchase path runs as it does with Stripe.
 */
const digest = (value: string, length = 24): string =>
  createHash('sha256').update(value).digest('hex').slice(0, length);

export function localPayments(options: { apiBaseUrl: string; clock: Clock }): PaymentsProvider {
  let sequence = 0;
  return {
    kind: 'local',

    async createCheckoutSession(input) {
      sequence += 1;
      const item = input.kind === 'tier' ? `tier:${input.tier}` : `package:${input.package}`;
      const id = `cs_local_${digest(`${input.orgId}|${item}|${options.clock.now().toISOString()}|${sequence}`)}`;
      return { id, url: `${options.apiBaseUrl}/billing/local-checkout/${id}` };
    },

    async createCustomer(input) {
      // One per organization, like a Stripe customer made with the organization as idempotency key.
      return { customerId: `cus_local_${digest(input.orgId, 16)}` };
    },

    async createPortalSession(input) {
      // There is no local billing portal: the customer is sent straight back.
      return { url: input.returnUrl };
    },

    async createPaymentIntent(input) {
      // Like Stripe's idempotency keys: the same key gives the same intent.
      const id = `pi_local_${digest(`${input.orgId}|${input.idempotencyKey}`)}`;
      return {
        id,
        client_secret: `${id}_secret_${digest(`secret|${id}`, 16)}`,
        amount: input.amountCents,
        currency: input.currency,
        status: 'requires_payment_method',
      };
    },
  };
}
