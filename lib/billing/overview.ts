import { allPayments } from '#lib/billing/billing-records';
import { TOKEN_PACKAGES, type TokenPackage } from '#lib/billing/catalogue';
import { monthOf, requireOrganization } from '#lib/billing/usage';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { tokensConsumed } from '#lib/tokens/ledger';

/** What GET /billing/overview says each figure counts. */
const COUNTS = [
  'revenue: every payment the payments webhook recorded for this organization (all time, paid only;',
  'product tier:<id>, package:<slug> or subscription); ai_spend: tokens of this month’s consume ledger',
  'entries, valued at the smallest token package’s price per token; infrastructure spend is not measured',
  '(null).',
].join(' ');

/** GET /billing/overview: revenue by product, this month's AI spend, and what is not measured. */
export async function overview(ctx: RequestContext) {
  const { orgId } = requirePrincipal(ctx);
  await requireOrganization(orgId);
  const byProduct = new Map<string, { product: string; amount_cents: number; payments: number }>();
  let failed = 0;
  for (const payment of await allPayments(orgId)) {
    if (payment.status !== 'paid') {
      failed += 1;
      continue;
    }
    const product = String(payment.product);
    const entry = byProduct.get(product) ?? { product, amount_cents: 0, payments: 0 };
    entry.amount_cents += Number(payment.amount_cents) || 0;
    entry.payments += 1;
    byProduct.set(product, entry);
  }
  const products = [...byProduct.values()].sort((a, b) => b.amount_cents - a.amount_cents);
  const period = monthOf(ctx.ports.clock.now());
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
    counts: COUNTS,
  };
}
