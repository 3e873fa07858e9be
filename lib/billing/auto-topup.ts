import { recordActivity } from '#lib/activity/activity-log';
import type { AutoTopupItem } from '#lib/billing/billing-keys';
import { getAutoTopupItem, putAutoTopupItem } from '#lib/billing/billing-records';
import { findPackage, TOKEN_PACKAGES, type TokenPackage } from '#lib/billing/catalogue';
import { knownPackage } from '#lib/billing/checkout';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { type ConsumeResult, consume } from '#lib/tokens/ledger';

/**
 * Auto top-up: when a consume takes the balance from at or above the enabled threshold to below it, a
 * payment for the configured package is started, once. "Once" holds twice over: only the consume
 * whose exact balance crossed the threshold starts it (later consumes are already below), and the
 * payment's idempotency key is that consume's ledger entry, so a retried request never pays twice.
 * The tokens arrive through the payments webhook when the payment succeeds.
 */

export interface AutoTopup {
  enabled: boolean;
  threshold: number | null;
  package_slug: string | null;
  updated_at: string | null;
  available_packages: TokenPackage[];
}

export async function getAutoTopup(ctx: RequestContext): Promise<AutoTopup> {
  const { orgId } = requirePrincipal(ctx);
  const item = await getAutoTopupItem(orgId);
  return {
    enabled: Boolean(item?.enabled),
    threshold: item?.threshold ?? null,
    package_slug: item?.package_slug ?? null,
    updated_at: item?.updated_at ?? null,
    available_packages: [...TOKEN_PACKAGES],
  };
}

export async function setAutoTopup(
  ctx: RequestContext,
  input: { enabled: boolean; threshold: number; package_slug: string },
): Promise<AutoTopup> {
  const principal = requireOrgRole(ctx, 'admin');
  knownPackage(input.package_slug);
  await putAutoTopupItem({
    org_id: principal.orgId,
    enabled: input.enabled,
    threshold: input.threshold,
    package_slug: input.package_slug,
    updated_at: ctx.ports.clock.now().toISOString(),
    updated_by: principal.userId !== undefined ? `user:${principal.userId}` : `api_key:${principal.keyId}`,
  });
  return getAutoTopup(ctx);
}

export interface TopUpStarted {
  payment_intent_id: string;
  package_slug: string;
}

/** Starts the configured payment when `consumed` took the balance across the threshold. */
export async function topUpIfCrossed(
  ctx: RequestContext,
  orgId: string,
  consumed: ConsumeResult,
  /** The settings when the caller has read them already (beside the consumption). */
  settings?: Promise<AutoTopupItem | undefined>,
): Promise<TopUpStarted | undefined> {
  const after = consumed.transaction.balance_after;
  if (consumed.duplicate || after === null) return undefined;
  const before = after - consumed.transaction.amount;
  const config = await (settings ?? getAutoTopupItem(orgId));
  if (!config?.enabled || typeof config.threshold !== 'number' || typeof config.package_slug !== 'string') {
    return undefined;
  }
  if (!(before >= config.threshold && after < config.threshold)) return undefined;
  const tokenPackage = findPackage(config.package_slug);
  if (!tokenPackage) throw new Error(`Unknown token package ${config.package_slug}`);
  const intent = await ctx.ports.payments.createPaymentIntent({
    orgId,
    package: tokenPackage.slug,
    amountCents: tokenPackage.price_cents,
    currency: tokenPackage.currency,
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
    ctx.ports.clock.now(),
  );
  return { payment_intent_id: intent.id, package_slug: config.package_slug };
}

/**
 * POST /tokens/consume: the consume, then the top-up check. A failure to start the payment is logged
 * and never undoes the consume that already happened.
 */
export async function consumeWithAutoTopup(
  ctx: RequestContext,
  input: Parameters<typeof consume>[1],
): Promise<ConsumeResult & { auto_topup: TopUpStarted | null }> {
  const orgId = requirePrincipal(ctx).orgId;
  // Read beside the consumption rather than after it: one round trip less, the same two reads.
  const settings = getAutoTopupItem(orgId);
  settings.catch(() => undefined);
  const result = await consume(ctx, input);
  let started: TopUpStarted | undefined;
  try {
    started = await topUpIfCrossed(ctx, orgId, result, settings);
  } catch (error) {
    logger.warn('auto top-up could not be started', { error: error as Error });
  }
  return { ...result, auto_topup: started ?? null };
}
