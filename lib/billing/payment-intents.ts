import { type PaymentIntentResult, SESSION_TTL_SECONDS } from '#lib/billing/billing-keys';
import { getPaymentIntentItem, putPaymentIntentItem } from '#lib/billing/billing-records';
import { knownPackage } from '#lib/billing/checkout';
import { randomBase62, sha256 } from '#lib/crypto/secrets';
import { ConflictError, isConditionFailed } from '#lib/errors';
import { requireOrgRole } from '#lib/identity/access';
import { epochSeconds } from '#lib/identity/keys';
import type { RequestContext } from '#lib/kernel/context';

/**
 * A payment intent for a token package. The same idempotency key answers the same intent: the first
 * answer is kept per organization for a day (as long as Stripe keeps its keys), and the provider gets
 * the key too. Reusing a key for another package is a 409, as Stripe would refuse it.
 */
export async function createPaymentIntent(
  ctx: RequestContext,
  input: { package_slug: string; idempotency_key?: string },
): Promise<PaymentIntentResult> {
  const { orgId } = requireOrgRole(ctx, 'admin');
  const tokenPackage = knownPackage(input.package_slug);
  const key = input.idempotency_key ?? randomBase62(24);
  const record = { orgId, keyHash: sha256(key) };
  const earlier = async () => {
    const found = await getPaymentIntentItem(record);
    if (!found) return undefined;
    if (found.package_slug !== tokenPackage.slug) {
      throw new ConflictError('This idempotency_key was used for another package');
    }
    return found.intent;
  };
  const first = await earlier();
  if (first) return first;

  const intent = await ctx.ports.payments.createPaymentIntent({
    orgId,
    package: tokenPackage.slug,
    amountCents: tokenPackage.price_cents,
    currency: tokenPackage.currency,
    // Scoped by organization: two tenants choosing the same key must not share an intent.
    idempotencyKey: `${orgId}:${key}`,
  });
  const result: PaymentIntentResult = {
    ...intent,
    package_slug: tokenPackage.slug,
    tokens: tokenPackage.tokens,
    idempotency_key: key,
  };
  const now = ctx.ports.clock.now();
  try {
    await putPaymentIntentItem(record, {
      package_slug: tokenPackage.slug,
      intent: result,
      created_at: now.toISOString(),
      expires_at: epochSeconds(now) + SESSION_TTL_SECONDS,
    });
    return result;
  } catch (error) {
    if (!isConditionFailed(error, 'intent-exists')) throw error;
    // A concurrent request with the same key won; its answer is the answer.
    return (await earlier()) ?? result;
  }
}
