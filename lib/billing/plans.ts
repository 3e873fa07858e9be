import { type CheckoutResult, type Subscription, toSubscription } from '#lib/billing/billing-keys';
import { getSubscriptionItem, orgTierUpdate, subscriptionUpdate } from '#lib/billing/billing-records';
import { findTier, type TierDefinition, tierOf } from '#lib/billing/catalogue';
import { openCheckout, tierCheckout, unknownTier } from '#lib/billing/checkout';
import {
  monthOf,
  requireOrganization,
  tierRank,
  type Usage,
  usageOf,
  type Violation,
  violationsFor,
} from '#lib/billing/usage';
import type { Tier } from '#lib/config';
import { transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '#lib/errors';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/** The organization's subscription and plan: what it has, what it uses, and moving between tiers. */

export async function getSubscription(ctx: RequestContext): Promise<Subscription> {
  const { orgId } = requirePrincipal(ctx);
  const org = await requireOrganization(orgId);
  const item = await getSubscriptionItem(orgId);
  if (!item) throw new NotFoundError('The organization has no subscription');
  return toSubscription(item, org.tier);
}

export async function getUsage(ctx: RequestContext) {
  const { orgId } = requirePrincipal(ctx);
  const org = await requireOrganization(orgId);
  const now = ctx.ports.clock.now();
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
  const now = ctx.ports.clock.now();
  const tier = tierOf(org.tier);
  const [usage, subscription] = await Promise.all([usageOf(org, now), getSubscriptionItem(orgId)]);
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
  if (!tier) throw unknownTier();
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
  const usage = await usageOf(org, ctx.ports.clock.now());
  return { org, usage, violations: violationsFor(usage, target) };
}

export async function validateDowngrade(ctx: RequestContext, input: { tier: string }): Promise<DowngradeCheck> {
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
export async function changePlan(ctx: RequestContext, input: { tier: string }): Promise<PlanChange> {
  const { orgId } = requireOrgRole(ctx, 'admin');
  const target = knownTier(input.tier);
  const { org, violations } = await checkTarget(ctx, orgId, target);
  const current = org.tier;
  if (target.id === current) return { changed: false, previous_tier: current, tier: current, checkout: null };
  if (target.id === 'enterprise') {
    throw new ValidationError('The request is not valid', [
      { path: 'tier', message: 'Enterprise is arranged by contract' },
    ]);
  }
  if (tierRank(target.id) > tierRank(current)) {
    const checkout = await openCheckout(ctx, orgId, tierCheckout(target.id));
    return { changed: false, previous_tier: current, tier: current, checkout };
  }
  if (violations.length > 0) {
    throw new UnprocessableError(`Current usage exceeds the ${target.name} tier's limits`, violations);
  }
  const now = ctx.ports.clock.now();
  await transact(
    [
      // Another plan change in between would make this one's usage check stale.
      orgTierUpdate({ orgId, tier: target.id, now, from: current }),
      subscriptionUpdate({
        orgId,
        now,
        fields: {
          tier: target.id,
          ...(target.id === 'free' ? { status: 'cancelled', cancelled_at: now.toISOString() } : {}),
        },
      }),
    ],
    { 'tier-changed': () => new ConflictError('The plan was changed by another request; try again') },
  );
  return { changed: true, previous_tier: current, tier: target.id, checkout: null };
}
