import { localPayments } from '#lib/adapters/local/local-payments';
import { deferred } from '#lib/app/deferred';
import { secrets } from '#lib/app/secrets';
import { config } from '#lib/config';
import { systemClock } from '#lib/kernel/clock';
import type { PaymentsProvider } from '#lib/kernel/ports';

/**
 * Payments: Stripe when STRIPE_SECRET_KEY is set (STRIPE_WEBHOOK_SECRET is then required), else in
 * local mode the local provider. Wired only into the functions that take payments; the Stripe library is
 * loaded at the first payment call, not at every cold start of those functions.
 */
export function payments(): PaymentsProvider {
  const secretKey = config.stripeSecretKey;
  if (secretKey) {
    void secrets.paymentsWebhookSecret;
    return deferred(
      async () => {
        const { stripeClient, stripePayments } = await import('#lib/adapters/aws/stripe-payments');
        return stripePayments(stripeClient(secretKey));
      },
      ['createCheckoutSession', 'createPortalSession', 'createCustomer', 'createPaymentIntent'],
      { kind: 'stripe' },
    );
  }
  if (config.mode === 'aws') throw new Error('STRIPE_SECRET_KEY is required in aws mode');
  return localPayments({ apiBaseUrl: `http://localhost:${config.port}/api`, clock: systemClock });
}

/** The local checkout pages exist only while the local provider is in use. */
export const localCheckoutEnabled = (): boolean => config.mode === 'local' && !config.stripeSecretKey;
