import { stripeClient, stripePayments } from '#lib/adapters/aws/stripe-payments';
import { localPayments } from '#lib/adapters/local/local-payments';
import { localSecret } from '#lib/adapters/local/local-secret';
import type { PaymentsProvider } from '#lib/adapters/ports';
import { config } from '#lib/config';
import { clock } from '#lib/wiring';

/**
 * Payments wiring, apart from lib/wiring.ts so that only the billing function bundles the Stripe
 * library. STRIPE_SECRET_KEY selects Stripe (and then STRIPE_WEBHOOK_SECRET is required); without it
 * local mode uses the local provider and a webhook secret generated once into DATA_DIR.
 */
let provider: PaymentsProvider | undefined;

export function paymentsProvider(): PaymentsProvider {
  if (!provider) {
    if (config.stripeSecretKey) {
      paymentsWebhookSecret();
      provider = stripePayments(stripeClient(config.stripeSecretKey));
    } else if (config.mode === 'aws') {
      throw new Error('STRIPE_SECRET_KEY is required in aws mode');
    } else {
      provider = localPayments({ apiBaseUrl: `http://localhost:${config.port}/api`, clock });
    }
  }
  return provider;
}

/** The secret that signs payment webhooks (Stripe's `whsec_…`, or the local one). */
export function paymentsWebhookSecret(): string {
  if (config.stripeWebhookSecret) return config.stripeWebhookSecret;
  if (config.stripeSecretKey) throw new Error('STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY');
  if (config.mode === 'aws') throw new Error('STRIPE_WEBHOOK_SECRET is required in aws mode');
  return localSecret(config.dataDir, 'stripe-webhook-secret');
}

/** The local checkout pages exist only while the local provider is in use. */
export const localCheckoutEnabled = (): boolean => config.mode === 'local' && !config.stripeSecretKey;
