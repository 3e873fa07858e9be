import { TIERS, type TierDefinition, TOKEN_PACKAGES, type TokenPackage } from '#lib/billing/catalogue';

/** The catalogue as GET /billing/tiers and GET /billing/pricing show it, with prices per million tokens. */

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
      price_per_million_included_tokens_cents: perMillion(tier.price_monthly_cents as number, tier.monthly_tokens),
    })),
  };
}
