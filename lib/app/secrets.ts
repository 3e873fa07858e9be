import { localSecret } from '#lib/adapters/local/local-secret';
import { config } from '#lib/config';
import type { Secrets } from '#lib/kernel/ports';

/**
 * The configured secrets, read at first use: JWT_SECRET (in local mode generated once into DATA_DIR),
 * and the payments webhook secret (STRIPE_WEBHOOK_SECRET, required with STRIPE_SECRET_KEY and in aws
 * mode; otherwise the local provider's, generated once into DATA_DIR).
 */
let accessTokenKey: Uint8Array | undefined;
let paymentsWebhookSecret: string | undefined;

export const secrets: Secrets = {
  get accessTokenKey() {
    if (!accessTokenKey) {
      if (config.jwtSecret) accessTokenKey = new TextEncoder().encode(config.jwtSecret);
      else if (config.mode === 'aws') throw new Error('JWT_SECRET is required in aws mode');
      else accessTokenKey = new TextEncoder().encode(localSecret(config.dataDir, 'jwt-secret'));
    }
    return accessTokenKey;
  },
  get paymentsWebhookSecret() {
    paymentsWebhookSecret ??= readPaymentsWebhookSecret();
    return paymentsWebhookSecret;
  },
};

function readPaymentsWebhookSecret(): string {
  if (config.stripeWebhookSecret) return config.stripeWebhookSecret;
  if (config.stripeSecretKey) throw new Error('STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY');
  if (config.mode === 'aws') throw new Error('STRIPE_WEBHOOK_SECRET is required in aws mode');
  return localSecret(config.dataDir, 'stripe-webhook-secret');
}
