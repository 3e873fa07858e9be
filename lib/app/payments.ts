import { stripeClient, stripePayments } from '#lib/adapters/aws/stripe-payments';
import { localPayments } from '#lib/adapters/local/local-payments';
import { secrets } from '#lib/app/secrets';
import { config } from '#lib/config';
import { systemClock } from '#lib/kernel/clock';
import type { PaymentsProvider } from '#lib/kernel/ports';

/**
 * Payments: Stripe when STRIPE_SECRET_KEY is set (STRIPE_WEBHOOK_SECRET is then required), else in
 * local mode the local provider. Wired only into the functions that take payments.
 */
export function payments(): PaymentsProvider {
  if (config.stripeSecretKey) {
    void secrets.paymentsWebhookSecret;
    return stripePayments(stripeClient(config.stripeSecretKey));
  }
  if (config.mode === 'aws') throw new Error('STRIPE_SECRET_KEY is required in aws mode');
  return localPayments({ apiBaseUrl: `http://localhost:${config.port}/api`, clock: systemClock });
}

/** The local checkout pages exist only while the local provider is in use. */
export const localCheckoutEnabled = (): boolean => config.mode === 'local' && !config.stripeSecretKey;
