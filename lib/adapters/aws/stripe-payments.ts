import Stripe from 'stripe';
import type { PaymentsProvider, PriceLine } from '#lib/kernel/ports';

/**
 * The Stripe adapter of PaymentsProvider. The billing domain hands over each price, which goes to Stripe
 * as inline `price_data` (no Price objects to create or keep in sync in the Stripe dashboard): a tier is
 * a monthly recurring line in a subscription-mode checkout, a token package one line in a payment-mode
 * checkout.
 *
 * Every session and intent carries `metadata.org_id` and `metadata.kind`, which the payments webhook
 * reads back to know whom a completed payment is for and what it bought.
 */
export interface StripeOptions {
  /** Test seams: a local HTTP server standing in for api.stripe.com. */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
  httpClient?: Stripe.HttpClient;
}

export function stripeClient(secretKey: string, options: StripeOptions = {}): Stripe {
  return new Stripe(secretKey, {
    maxNetworkRetries: 2,
    timeout: 10_000,
    ...(options.host ? { host: options.host } : {}),
    ...(options.port ? { port: options.port } : {}),
    ...(options.protocol ? { protocol: options.protocol } : {}),
    ...(options.httpClient ? { httpClient: options.httpClient } : {}),
  });
}

export function stripePayments(stripe: Stripe): PaymentsProvider {
  return {
    kind: 'stripe',

    async createCheckoutSession(input) {
      const common = {
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        client_reference_id: input.orgId,
      };
      const session =
        input.kind === 'tier'
          ? await stripe.checkout.sessions.create({
              ...common,
              mode: 'subscription',
              line_items: [lineItem(input.price)],
              metadata: { org_id: input.orgId, kind: 'tier', tier: input.tier },
              // customer.subscription.* events carry the subscription's metadata, not the session's.
              subscription_data: { metadata: { org_id: input.orgId, tier: input.tier } },
            })
          : await stripe.checkout.sessions.create({
              ...common,
              mode: 'payment',
              line_items: [lineItem(input.price)],
              metadata: { org_id: input.orgId, kind: 'package', package: input.package },
              // Marked as part of a checkout, so that its payment_intent.succeeded does not deposit twice.
              payment_intent_data: {
                metadata: { org_id: input.orgId, package: input.package, source: 'checkout' },
              },
            });
      if (!session.url) throw new Error('Stripe returned a checkout session without a URL');
      return { id: session.id, url: session.url };
    },

    async createCustomer(input) {
      const customer = await stripe.customers.create(
        { name: input.name, metadata: { org_id: input.orgId } },
        { idempotencyKey: `customer:${input.orgId}` },
      );
      return { customerId: customer.id };
    },

    async createPortalSession(input) {
      const session = await stripe.billingPortal.sessions.create({
        customer: input.customerId,
        return_url: input.returnUrl,
      });
      return { url: session.url };
    },

    async createPaymentIntent(input) {
      const intent = await stripe.paymentIntents.create(
        {
          amount: input.amountCents,
          currency: input.currency,
          automatic_payment_methods: { enabled: true },
          metadata: {
            org_id: input.orgId,
            kind: 'package',
            package: input.package,
            source: 'payment_intent',
          },
        },
        { idempotencyKey: input.idempotencyKey },
      );
      return {
        id: intent.id,
        client_secret: intent.client_secret ?? '',
        amount: intent.amount,
        currency: intent.currency,
        status: intent.status,
      };
    },
  };
}

/** One checkout line of `price`, as Stripe's inline `price_data`. */
function lineItem(price: PriceLine) {
  return {
    quantity: 1,
    price_data: {
      currency: price.currency,
      unit_amount: price.amountCents,
      ...(price.interval ? { recurring: { interval: price.interval } } : {}),
      product_data: { name: price.name, metadata: price.metadata },
    },
  };
}
