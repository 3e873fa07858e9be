import { recordActivity } from '#lib/activity/activity-log';
import { billingKeys } from '#lib/billing/keys';
import type { RequestContext } from '#lib/context';
import { table } from '#lib/db/table';
import { requirePrincipal } from '#lib/identity/access';
import type { PaymentsProvider } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { type ConsumeResult, consume } from '#lib/tokens/ledger';

/**
 * Auto top-up: when a consume takes the balance from at or above the enabled threshold to below it, a
 * payment for the configured package is started, once. "Once" holds twice over: only the consume
 * whose exact balance crossed the threshold starts it (later consumes are already below), and the
 * payment's idempotency key is that consume's ledger entry, so a retried request never pays twice.
 * The tokens arrive through the payments webhook when the payment succeeds.
 */
export interface TopUpStarted {
  payment_intent_id: string;
  package_slug: string;
}

export async function topUpIfCrossed(
  payments: PaymentsProvider,
  orgId: string,
  consumed: ConsumeResult,
  now: Date,
): Promise<TopUpStarted | undefined> {
  const after = consumed.transaction.balance_after;
  if (consumed.duplicate || after === null) return undefined;
  const before = after - consumed.transaction.amount;
  const config = (await table.get({ Key: billingKeys.autoTopup(orgId) })).Item;
  if (!config?.enabled || typeof config.threshold !== 'number' || typeof config.package_slug !== 'string') {
    return undefined;
  }
  if (!(before >= config.threshold && after < config.threshold)) return undefined;
  const intent = await payments.createPaymentIntent({
    orgId,
    package: config.package_slug,
    idempotencyKey: `${orgId}:auto-topup:${consumed.transaction.id}`,
  });
  await recordActivity(
    orgId,
    {
      actor_type: 'system',
      actor_id: 'auto-topup',
      action: 'billing.auto_topup_started',
      entity_type: 'payment_intent',
      entity_id: intent.id,
      metadata: { package_slug: config.package_slug, threshold: config.threshold, balance: after },
    },
    now,
  );
  return { payment_intent_id: intent.id, package_slug: config.package_slug };
}

/**
 * POST /tokens/consume: the consume, then the top-up check. A failure to start the payment is logged
 * and never undoes the consume that already happened.
 */
export async function consumeWithAutoTopup(
  ctx: RequestContext,
  payments: PaymentsProvider,
  input: Parameters<typeof consume>[1],
): Promise<ConsumeResult & { auto_topup: TopUpStarted | null }> {
  const result = await consume(ctx, input);
  let started: TopUpStarted | undefined;
  try {
    started = await topUpIfCrossed(payments, requirePrincipal(ctx).orgId, result, ctx.clock.now());
  } catch (error) {
    logger.warn('auto top-up could not be started', { error: error as Error });
  }
  return { ...result, auto_topup: started ?? null };
}
