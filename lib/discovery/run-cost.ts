import { TOKEN_PACKAGES } from '#lib/billing/catalogue';

/**
 * What a discovery run costs, what it found, and which runs count as waste. The definitions every
 * figure of GET /discovery-engines and GET /discovery-engines/efficiency follows:
 *
 * - **Cost**: the tokens a run consumed from the organization's balance, at the catalogue's list price
 *   of a token: the dearest per token of its token packages (lib/billing/catalogue.ts; today Starter,
 *   $10 for 500,000 tokens, which is $0.02 per 1,000 tokens). The ledger debits one balance token per
 *   model token whatever the model, so the price per 1k tokens is the same for every model
 *   (`pricePer1kMicroUsd` takes the model so that a per-model price has one place to go). A run's cost
 *   is fixed when it ends, at the price of that day, in integer micro-dollars so that sums stay exact.
 * - **Findings**: the number of items of the `findings` array in the run's answer (its instructions ask
 *   for `{ summary, findings: [...] }`); an answer without such an array found nothing.
 * - **Waste**: the runs that gave nothing for what they used. A failed run consumes no tokens (as agent
 *   runs, lib/agents/run-results.ts) but its compute time is wasted; a succeeded run with no findings
 *   (an *empty* run) wastes its tokens, their cost and its compute time. Waste share: wasted tokens over
 *   the tokens used.
 * - **Compute minutes**: from the run's claim by its worker to its end, by the service's clock.
 */

const MICRO_USD_PER_CENT = 10_000;

/** Micro-dollars per 1,000 tokens: the catalogue's dearest token, as a token bought alone costs. */
const LIST_PRICE_PER_1K_MICRO_USD = Math.max(
  ...TOKEN_PACKAGES.map((tokenPackage) =>
    Math.round((tokenPackage.price_cents * MICRO_USD_PER_CENT * 1000) / tokenPackage.tokens),
  ),
);

/** The price of 1,000 tokens of `model`, in micro-dollars (the same for every model; see above). */
export const pricePer1kMicroUsd = (_model: string | null): number => LIST_PRICE_PER_1K_MICRO_USD;

/** The cost of a run's consumed tokens, in micro-dollars, rounded to the nearest one. */
export const costMicroUsd = (tokens: number, model: string | null): number =>
  Math.round((tokens * pricePer1kMicroUsd(model)) / 1000);

/** Micro-dollars as dollars, as responses show them. */
export const usd = (microUsd: number): number => Math.round(microUsd) / 1_000_000;

/** Milliseconds as minutes, to the thousandth (60 ms). */
export const minutes = (ms: number): number => Math.round(ms / 60) / 1000;

/** The number of findings in a run's answer: the length of its `findings` array, else 0. */
export const findingsOf = (output: Record<string, unknown>): number =>
  Array.isArray(output.findings) ? output.findings.length : 0;

/** What the price is, for the efficiency report's readers. */
export const priceBasis = () => ({
  per_1k_tokens_usd: usd(LIST_PRICE_PER_1K_MICRO_USD),
  currency: 'usd',
  basis:
    'The list price of a token: the dearest per token of the token packages of the billing catalogue. The ' +
    'balance is debited one token per model token whatever the model, so every model has this price.',
});
