import type { Tier } from '#lib/config';
import type { PriceLine } from '#lib/kernel/ports';

/**
 * The one catalogue of plans and prices: every tier's rate limits (from the specification), monthly
 * token allowance, resource limits and price, and the token packages sold on their own. Billing,
 * rate limiting and plan checks all read it; nothing else states a limit or a price.
 *
 * Prices are in the smallest currency unit (cents). `null` limits mean unlimited; a `null` price
 * means the tier is sold by contract (enterprise).
 */
export interface TierDefinition {
  id: Tier;
  name: string;
  description: string;
  /** Price per month in cents, or null when sold by contract. */
  price_monthly_cents: number | null;
  currency: 'usd';
  rate_limits: { per_minute: number; per_hour: number };
  monthly_tokens: number;
  limits: { agents: number | null; pipelines: number | null; members: number | null };
}

export const TIERS: readonly TierDefinition[] = [
  {
    id: 'free',
    name: 'Free',
    description: 'For trying the service with a few agents.',
    price_monthly_cents: 0,
    currency: 'usd',
    rate_limits: { per_minute: 100, per_hour: 1_000 },
    monthly_tokens: 100_000,
    limits: { agents: 3, pipelines: 2, members: 3 },
  },
  {
    id: 'pro',
    name: 'Pro',
    description: 'For one builder running agents every day.',
    price_monthly_cents: 2_900,
    currency: 'usd',
    rate_limits: { per_minute: 600, per_hour: 10_000 },
    monthly_tokens: 2_000_000,
    limits: { agents: 25, pipelines: 25, members: 10 },
  },
  {
    id: 'teams',
    name: 'Teams',
    description: 'For teams sharing agents, pipelines and credentials.',
    price_monthly_cents: 9_900,
    currency: 'usd',
    rate_limits: { per_minute: 2_000, per_hour: 50_000 },
    monthly_tokens: 10_000_000,
    limits: { agents: 100, pipelines: 100, members: 50 },
  },
  {
    id: 'enterprise',
    name: 'Enterprise',
    description: 'Custom limits and terms; the defaults below apply until a contract sets others.',
    price_monthly_cents: null,
    currency: 'usd',
    rate_limits: { per_minute: 10_000, per_hour: 200_000 },
    monthly_tokens: 100_000_000,
    limits: { agents: null, pipelines: null, members: null },
  },
];

export interface TokenPackage {
  slug: string;
  name: string;
  tokens: number;
  price_cents: number;
  currency: 'usd';
}

export const TOKEN_PACKAGES: readonly TokenPackage[] = [
  { slug: 'starter', name: 'Starter', tokens: 500_000, price_cents: 1_000, currency: 'usd' },
  { slug: 'growth', name: 'Growth', tokens: 3_000_000, price_cents: 5_000, currency: 'usd' },
  { slug: 'scale', name: 'Scale', tokens: 20_000_000, price_cents: 30_000, currency: 'usd' },
];

/** Tokens every new organization receives once (ledger type `signup_bonus`). */
export const SIGNUP_BONUS_TOKENS = 10_000;

/** Task creation has its own limit per organization, whatever the tier. */
export const TASK_CREATION_PER_MINUTE = 30;

export const tierOf = (id: Tier): TierDefinition => TIERS.find((tier) => tier.id === id) as TierDefinition;

export const findTier = (id: string): TierDefinition | undefined => TIERS.find((tier) => tier.id === id);

export const findPackage = (slug: string): TokenPackage | undefined =>
  TOKEN_PACKAGES.find((tokenPackage) => tokenPackage.slug === slug);

/**
 * A tier's monthly price as the payments provider charges it (a tier without a price has none).
 *
 * @example tierPriceLine(findTier('pro')!) // { name: 'Pro plan', amountCents: 2900, interval: 'month', … }
 */
export function tierPriceLine(tier: TierDefinition): PriceLine | undefined {
  if (!tier.price_monthly_cents) return undefined;
  return {
    name: `${tier.name} plan`,
    amountCents: tier.price_monthly_cents,
    currency: tier.currency,
    interval: 'month',
    metadata: { tier: tier.id },
  };
}

/** A token package's price as the payments provider charges it, once. */
export const packagePriceLine = (tokenPackage: TokenPackage): PriceLine => ({
  name: `${tokenPackage.name} token package (${tokenPackage.tokens.toLocaleString('en-US')} tokens)`,
  amountCents: tokenPackage.price_cents,
  currency: tokenPackage.currency,
  metadata: { package: tokenPackage.slug },
});
