import Stripe from 'stripe';
import { findPackage, findTier } from '#lib/billing/catalogue';
import type { CheckoutItem, PaymentsProvider } from '#lib/kernel/ports';

/**
 * The Stripe adapter of PaymentsProvider. Prices come from the catalogue as inline `price_data` (no
 * Price objects to create or keep in sync in the Stripe dashboard): a tier is a monthly recurring line
 * in a subscription-mode checkout, a token package one line in a payment-mode checkout.
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
              line_items: [tierLine(input)],
              metadata: { org_id: input.orgId, kind: 'tier', tier: input.tier },
              // customer.subscription.* events carry the subscription's metadata, not the session's.
              subscription_data: { metadata: { org_id: input.orgId, tier: input.tier } },
            })
          : await stripe.checkout.sessions.create({
              ...common,
              mode: 'payment',
              line_items: [packageLine(input.package)],
              metadata: { org_id: input.orgId, kind: 'package', package: input.package },
              // Marked as part of a checkout, so that its payment_intent.succeeded does not deposit twice.
              payment_intent_data: {
                metadata: { org_id: input.orgId, package: input.package, source: 'checkout' },
              },
            });
      if (!session.url) throw new Error('Stripe returned a checkout session without a URL');
      return { id: session.id, url: session.url };
    },

    async createPortalSession(input) {
      const session = await stripe.billingPortal.sessions.create({
        customer: input.customerId,
        return_url: input.returnUrl,
      });
      return { url: session.url };
    },

    async createPaymentIntent(input) {
      const tokenPackage = findPackage(input.package);
      if (!tokenPackage) throw new Error(`Unknown token package ${input.package}`);
      const intent = await stripe.paymentIntents.create(
        {
          amount: tokenPackage.price_cents,
          currency: tokenPackage.currency,
          automatic_payment_methods: { enabled: true },
          metadata: {
            org_id: input.orgId,
            kind: 'package',
            package: tokenPackage.slug,
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

function tierLine(item: Extract<CheckoutItem, { kind: 'tier' }>) {
  const tier = findTier(item.tier);
  if (!tier || tier.price_monthly_cents === null || tier.price_monthly_cents === 0) {
    throw new Error(`Tier ${item.tier} is not sold through checkout`);
  }
  return {
    quantity: 1,
    price_data: {
      currency: tier.currency,
      unit_amount: tier.price_monthly_cents,
      recurring: { interval: 'month' as const },
      product_data: { name: `${tier.name} plan`, metadata: { tier: tier.id } },
    },
  };
}

function packageLine(slug: string) {
  const tokenPackage = findPackage(slug);
  if (!tokenPackage) throw new Error(`Unknown token package ${slug}`);
  return {
    quantity: 1,
    price_data: {
      currency: tokenPackage.currency,
      unit_amount: tokenPackage.price_cents,
      product_data: {
        name: `${tokenPackage.name} token package (${tokenPackage.tokens.toLocaleString('en-US')} tokens)`,
        metadata: { package: tokenPackage.slug },
      },
    },
  };
}
