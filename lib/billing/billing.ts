import {
  findPackage,
  findTier,
  TIERS,
  type TierDefinition,
  TOKEN_PACKAGES,
  type TokenPackage,
  tierOf,
} from '#lib/billing/catalogue';
import { billingKeys, SESSION_TTL_SECONDS } from '#lib/billing/keys';
import { subscriptionUpdate } from '#lib/billing/payments-webhook';
import {
  monthOf,
  requireOrganization,
  tierRank,
  tokensConsumed,
  type Usage,
  usageOf,
  type Violation,
  violationsFor,
} from '#lib/billing/usage';
import type { Tier } from '#lib/config';
import type { RequestContext } from '#lib/context';
import { randomBase62, sha256 } from '#lib/crypto/secrets';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '#lib/errors';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import { epochSeconds, identityKeys } from '#lib/identity/keys';
import type { CheckoutItem, CheckoutSession, PaymentIntent, PaymentsProvider } from '#lib/kernel/ports';

/** Billing for bearer callers: the active organization's subscription, purchases, usage and plan. */

// ---------------------------------------------------------------- catalogue

const perMillion = (cents: number, tokens: number): number => Math.round((cents / tokens) * 1e6 * 100) / 100;

export const listTiers = (): TierDefinition[] => [...TIERS];

export function pricing() {
  const starter = TOKEN_PACKAGES[0] as TokenPackage;
  const starterRate = perMillion(starter.price_cents, starter.tokens);
  return {
    currency: 'usd',
    tiers: [...TIERS],
    token_packages: TOKEN_PACKAGES.map((tokenPackage) => {
      const rate = perMillion(tokenPackage.price_cents, tokenPackage.tokens);
      return {
        ...tokenPackage,
        price_per_million_tokens_cents: rate,
        discount_vs_smallest_package_percent: Math.round((1 - rate / starterRate) * 1000) / 10,
      };
    }),
    economics: TIERS.filter((tier) => tier.price_monthly_cents !== null).map((tier) => ({
      tier: tier.id,
      price_monthly_cents: tier.price_monthly_cents as number,
      monthly_tokens: tier.monthly_tokens,
      // The price also buys limits and rate limits; this is the price over the included tokens only.
      price_per_million_included_tokens_cents: perMillion(
        tier.price_monthly_cents as number,
        tier.monthly_tokens,
      ),
    })),
  };
}

// ---------------------------------------------------------------- subscription

export interface Subscription {
  org_id: string;
  tier: Tier;
  status: string;
  customer_id: string | null;
  subscription_id: string | null;
  current_period_end: string | null;
  created_at: string;
  updated_at: string;
}

async function subscriptionItem(orgId: string): Promise<Record<string, unknown> | undefined> {
  const result = await table.get({ Key: billingKeys.subscription(orgId), ConsistentRead: true });
  return result.Item;
}

const toSubscription = (item: Record<string, unknown>, fallbackTier: Tier): Subscription => ({
  org_id: String(item.org_id),
  tier: (findTier(String(item.tier))?.id ?? fallbackTier) as Tier,
  status: String(item.status ?? 'active'),
  customer_id: (item.customer_id as string | undefined) ?? null,
  subscription_id: (item.subscription_id as string | undefined) ?? null,
  current_period_end: (item.current_period_end as string | undefined) ?? null,
  created_at: String(item.created_at),
  updated_at: String(item.updated_at),
});

export async function getSubscription(ctx: RequestContext): Promise<Subscription> {
  const { orgId } = requirePrincipal(ctx);
  const org = await requireOrganization(orgId);
  const item = await subscriptionItem(orgId);
  if (!item) throw new NotFoundError('The organization has no subscription');
  return toSubscription(item, org.tier);
}

// ---------------------------------------------------------------- checkout, portal, payment intents

const successUrl = (ctx: RequestContext) => `${ctx.baseUrl}/billing/subscription?checkout=success`;
const cancelUrl = (ctx: RequestContext) => `${ctx.baseUrl}/billing/subscription?checkout=cancelled`;

export interface CheckoutResult extends CheckoutSession {
  kind: 'tier' | 'package';
  tier: string | null;
  package: string | null;
}

/** A tier sold through checkout: priced, and neither free nor by contract. */
function sellableTier(slug: string): TierDefinition {
  const tier = findTier(slug);
  if (!tier) {
    throw new ValidationError('The request is not valid', [
      { path: 'body.tier', message: `Unknown tier; one of ${TIERS.map((t) => t.id).join(', ')}` },
    ]);
  }
  if (!tier.price_monthly_cents) {
    throw new ValidationError('The request is not valid', [
      {
        path: 'body.tier',
        message:
          tier.id === 'free' ? 'The free tier needs no checkout' : 'Enterprise is arranged by contract',
      },
    ]);
  }
  return tier;
}

function knownPackage(slug: string): TokenPackage {
  const tokenPackage = findPackage(slug);
  if (!tokenPackage) {
    throw new ValidationError('The request is not valid', [
      {
        path: 'body.package_slug',
        message: `Unknown token package; one of ${TOKEN_PACKAGES.map((p) => p.slug).join(', ')}`,
      },
    ]);
  }
  return tokenPackage;
}

async function openCheckout(
  ctx: RequestContext,
  payments: PaymentsProvider,
  orgId: string,
  item: CheckoutItem,
): Promise<CheckoutResult> {
  const session = await payments.createCheckoutSession({
    orgId,
    successUrl: successUrl(ctx),
    cancelUrl: cancelUrl(ctx),
    ...item,
  });
  const now = ctx.clock.now();
  const result: CheckoutResult = {
    ...session,
    kind: item.kind,
    tier: item.kind === 'tier' ? item.tier : null,
    package: item.kind === 'package' ? item.package : null,
  };
  // Remembered for the local checkout page, and as a trace of who started which purchase.
  await table.put({
    Item: {
      ...billingKeys.checkoutSession(session.id),
      ...result,
      org_id: orgId,
      provider: payments.kind,
      success_url: successUrl(ctx),
      created_at: now.toISOString(),
      expires_at: epochSeconds(now) + SESSION_TTL_SECONDS,
    },
  });
  return result;
}

export async function startCheckout(
  ctx: RequestContext,
  payments: PaymentsProvider,
  input: { tier?: string; package_slug?: string },
): Promise<CheckoutResult> {
  const { orgId } = requireOrgRole(ctx, 'admin');
  const item: CheckoutItem =
    input.package_slug !== undefined
      ? { kind: 'package', package: knownPackage(input.package_slug).slug }
      : { kind: 'tier', tier: sellableTier(input.tier ?? '').id };
  await requireOrganization(orgId);
  return openCheckout(ctx, payments, orgId, item);
}

export async function openPortal(ctx: RequestContext, payments: PaymentsProvider): Promise<{ url: string }> {
  const { orgId } = requireOrgRole(ctx, 'admin');
  const customerId = (await subscriptionItem(orgId))?.customer_id as string | undefined;
  if (!customerId) throw new NotFoundError('The organization has no billing account yet; subscribe first');
  return payments.createPortalSession({
    orgId,
    customerId,
    returnUrl: `${ctx.baseUrl}/billing/subscription`,
  });
}

export interface PaymentIntentResult extends PaymentIntent {
  package_slug: string;
  tokens: number;
  idempotency_key: string;
}

/**
 * A payment intent for a token package. The same idempotency key answers the same intent: the first
 * answer is kept per organization for a day (as long as Stripe keeps its keys), and the provider gets
 * the key too. Reusing a key for another package is a 409, as Stripe would refuse it.
 */
export async function createPaymentIntent(
  ctx: RequestContext,
  payments: PaymentsProvider,
  input: { package_slug: string; idempotency_key?: string },
): Promise<PaymentIntentResult> {
  const { orgId } = requireOrgRole(ctx, 'admin');
  const tokenPackage = knownPackage(input.package_slug);
  const key = input.idempotency_key ?? randomBase62(24);
  const recordKey = billingKeys.paymentIntent(orgId, sha256(key));
  const earlier = async () => {
    const found = (await table.get({ Key: recordKey, ConsistentRead: true })).Item;
    if (!found) return undefined;
    if (found.package_slug !== tokenPackage.slug) {
      throw new ConflictError('This idempotency_key was used for another package');
    }
    return found.intent as PaymentIntentResult;
  };
  const first = await earlier();
  if (first) return first;

  const intent = await payments.createPaymentIntent({
    orgId,
    package: tokenPackage.slug,
    // Scoped by organization: two tenants choosing the same key must not share an intent.
    idempotencyKey: `${orgId}:${key}`,
  });
  const result: PaymentIntentResult = {
    ...intent,
    package_slug: tokenPackage.slug,
    tokens: tokenPackage.tokens,
    idempotency_key: key,
  };
  const now = ctx.clock.now();
  try {
    await table.put({
      Item: {
        ...recordKey,
        package_slug: tokenPackage.slug,
        intent: result,
        created_at: now.toISOString(),
        expires_at: epochSeconds(now) + SESSION_TTL_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    return result;
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    // A concurrent request with the same key won; its answer is the answer.
    return (await earlier()) ?? result;
  }
}

// ---------------------------------------------------------------- usage and plans

export async function getUsage(ctx: RequestContext) {
  const { orgId } = requirePrincipal(ctx);
  const org = await requireOrganization(orgId);
  const now = ctx.clock.now();
  const tier = tierOf(org.tier);
  return {
    period: monthOf(now),
    tier: tier.id,
    limits: { ...tier.limits, monthly_tokens: tier.monthly_tokens },
    usage: await usageOf(org, now),
  };
}

const remaining = (limit: number | null, used: number): number | null =>
  limit === null ? null : Math.max(0, limit - used);

export async function planSummary(ctx: RequestContext) {
  const { orgId } = requirePrincipal(ctx);
  const org = await requireOrganization(orgId);
  const now = ctx.clock.now();
  const tier = tierOf(org.tier);
  const [usage, subscription] = await Promise.all([usageOf(org, now), subscriptionItem(orgId)]);
  return {
    tier,
    subscription: subscription ? toSubscription(subscription, org.tier) : null,
    period: monthOf(now),
    usage,
    remaining: {
      agents: remaining(tier.limits.agents, usage.agents),
      pipelines: remaining(tier.limits.pipelines, usage.pipelines),
      members: remaining(tier.limits.members, usage.members),
      monthly_tokens: remaining(tier.monthly_tokens, usage.tokens_consumed),
    },
    violations: violationsFor(usage, tier),
  };
}

function knownTier(slug: string): TierDefinition {
  const tier = findTier(slug);
  if (!tier) {
    throw new ValidationError('The request is not valid', [
      { path: 'body.tier', message: `Unknown tier; one of ${TIERS.map((t) => t.id).join(', ')}` },
    ]);
  }
  return tier;
}

export interface DowngradeCheck {
  allowed: boolean;
  current_tier: Tier;
  tier: Tier;
  usage: Usage;
  violations: Violation[];
}

async function checkTarget(ctx: RequestContext, orgId: string, target: TierDefinition) {
  const org = await requireOrganization(orgId);
  const usage = await usageOf(org, ctx.clock.now());
  return { org, usage, violations: violationsFor(usage, target) };
}

export async function validateDowngrade(
  ctx: RequestContext,
  input: { tier: string },
): Promise<DowngradeCheck> {
  const { orgId } = requirePrincipal(ctx);
  const target = knownTier(input.tier);
  const { org, usage, violations } = await checkTarget(ctx, orgId, target);
  return { allowed: violations.length === 0, current_tier: org.tier, tier: target.id, usage, violations };
}

export interface PlanChange {
  changed: boolean;
  previous_tier: Tier;
  tier: Tier;
  /** Set when the new tier must be paid for first: the change happens when the checkout completes. */
  checkout: CheckoutResult | null;
}

/**
 * Changes the organization's tier. A move to a pricier tier needs payment: the answer is a checkout
 * session and the tier changes when the payments webhook reports it paid. A move down happens at once
 * when usage fits the target's limits, else 422 with the violations.
 */
export async function changePlan(
  ctx: RequestContext,
  payments: PaymentsProvider,
  input: { tier: string },
): Promise<PlanChange> {
  const { orgId } = requireOrgRole(ctx, 'admin');
  const target = knownTier(input.tier);
  const { org, violations } = await checkTarget(ctx, orgId, target);
  const current = org.tier;
  if (target.id === current) return { changed: false, previous_tier: current, tier: current, checkout: null };
  if (target.id === 'enterprise') {
    throw new ValidationError('The request is not valid', [
      { path: 'body.tier', message: 'Enterprise is arranged by contract' },
    ]);
  }
  if (tierRank(target.id) > tierRank(current)) {
    const checkout = await openCheckout(ctx, payments, orgId, {
      kind: 'tier',
      tier: sellableTier(target.id).id,
    });
    return { changed: false, previous_tier: current, tier: current, checkout };
  }
  if (violations.length > 0) {
    throw new UnprocessableError(`Current usage exceeds the ${target.name} tier's limits`, violations);
  }
  const now = ctx.clock.now();
  await transact(
    [
      {
        Update: {
          Key: identityKeys.organization(orgId),
          UpdateExpression: 'SET tier = :tier, updated_at = :now',
          // Another plan change in between would make this one's usage check stale.
          ConditionExpression: 'attribute_exists(pk) AND tier = :from',
          ExpressionAttributeValues: { ':tier': target.id, ':now': now.toISOString(), ':from': current },
        },
      },
      subscriptionUpdate(orgId, now, {
        tier: target.id,
        ...(target.id === 'free' ? { status: 'cancelled', cancelled_at: now.toISOString() } : {}),
      }),
    ],
    { 0: () => new ConflictError('The plan was changed by another request; try again') },
  );
  return { changed: true, previous_tier: current, tier: target.id, checkout: null };
}

// ---------------------------------------------------------------- overview

export async function overview(ctx: RequestContext) {
  const { orgId } = requirePrincipal(ctx);
  await requireOrganization(orgId);
  const byProduct = new Map<string, { product: string; amount_cents: number; payments: number }>();
  let failed = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': 'PAYMENT#' },
      ExclusiveStartKey: startKey,
    });
    for (const item of page.Items ?? []) {
      if (item.status !== 'paid') {
        failed += 1;
        continue;
      }
      const product = String(item.product);
      const entry = byProduct.get(product) ?? { product, amount_cents: 0, payments: 0 };
      entry.amount_cents += Number(item.amount_cents) || 0;
      entry.payments += 1;
      byProduct.set(product, entry);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  const products = [...byProduct.values()].sort((a, b) => b.amount_cents - a.amount_cents);
  const period = monthOf(ctx.clock.now());
  const consumed = await tokensConsumed(orgId, period);
  const starter = TOKEN_PACKAGES[0] as TokenPackage;
  return {
    currency: 'usd',
    revenue: {
      total_cents: products.reduce((sum, product) => sum + product.amount_cents, 0),
      payments: products.reduce((sum, product) => sum + product.payments, 0),
      failed_payments: failed,
      by_product: products,
    },
    ai_spend: {
      period,
      tokens_consumed: consumed,
      estimated_value_cents: Math.round((consumed * starter.price_cents) / starter.tokens),
    },
    infrastructure_spend: null,
    counts:
      'revenue: every payment the payments webhook recorded for this organization (all time, paid only; ' +
      'product tier:<id>, package:<slug> or subscription); ai_spend: tokens of this month’s consume ledger ' +
      'entries, valued at the smallest token package’s price per token; infrastructure spend is not measured ' +
      '(null).',
  };
}

// ---------------------------------------------------------------- auto top-up

export interface AutoTopup {
  enabled: boolean;
  threshold: number | null;
  package_slug: string | null;
  updated_at: string | null;
  available_packages: TokenPackage[];
}

export async function getAutoTopup(ctx: RequestContext): Promise<AutoTopup> {
  const { orgId } = requirePrincipal(ctx);
  const item = (await table.get({ Key: billingKeys.autoTopup(orgId) })).Item;
  return {
    enabled: Boolean(item?.enabled),
    threshold: (item?.threshold as number | undefined) ?? null,
    package_slug: (item?.package_slug as string | undefined) ?? null,
    updated_at: (item?.updated_at as string | undefined) ?? null,
    available_packages: [...TOKEN_PACKAGES],
  };
}

export async function setAutoTopup(
  ctx: RequestContext,
  input: { enabled: boolean; threshold: number; package_slug: string },
): Promise<AutoTopup> {
  const principal = requireOrgRole(ctx, 'admin');
  knownPackage(input.package_slug);
  const now = ctx.clock.now().toISOString();
  await table.put({
    Item: {
      ...billingKeys.autoTopup(principal.orgId),
      org_id: principal.orgId,
      enabled: input.enabled,
      threshold: input.threshold,
      package_slug: input.package_slug,
      updated_at: now,
      updated_by: principal.userId !== undefined ? `user:${principal.userId}` : `api_key:${principal.keyId}`,
    },
  });
  return getAutoTopup(ctx);
}
