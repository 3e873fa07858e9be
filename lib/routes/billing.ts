import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import {
  AutoTopup,
  AutoTopupInput,
  Checkout,
  Limits,
  Period,
  Subscription,
  Tier,
  TokenPackage,
  tierSlug,
  Usage,
  Violation,
  WebhookReceipt,
} from '#lib/routes/billing-schemas';

/**
 * Billing: tiers and prices from the catalogue, the organization's subscription and plan changes,
 * checkout / portal / payment intents through the payments provider, and the signed payments webhook.
 * The `billing` function serves all of it, /webhooks/payments included (its own API Gateway route,
 * more specific than the webhooks function's greedy one).
 */

const group = 'billing';
const tags = ['Billing'];

export const listTiers = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/billing/tiers',
  auth: 'none',
  summary: 'Subscription tiers with their limits and prices',
  description: 'Every tier, cheapest first, in one page (`meta.total` is the number of tiers).',
  response: Tier,
  envelope: 'list',
});

export const getPricing = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/billing/pricing',
  auth: 'none',
  summary: 'Tiers, token packages and their economics',
  description:
    'Economics: each package’s price per million tokens and its discount against the smallest package; each ' +
    'priced tier’s price over its included monthly tokens (the tier also buys limits, so this is not a token ' +
    'price).',
  response: z.object({
    currency: z.string(),
    tiers: z.array(Tier),
    token_packages: z.array(
      TokenPackage.extend({
        price_per_million_tokens_cents: z.number(),
        discount_vs_smallest_package_percent: z.number(),
      }),
    ),
    economics: z.array(
      z.object({
        tier: z.string(),
        price_monthly_cents: z.number(),
        monthly_tokens: z.number(),
        price_per_million_included_tokens_cents: z.number(),
      }),
    ),
  }),
});

const WEBHOOK_DESCRIPTION = [
  'Stripe events. No bearer: the `Stripe-Signature` header is verified with the stripe library against ' +
    'STRIPE_WEBHOOK_SECRET (in local mode without it, a secret generated into DATA_DIR and printed by ' +
    '`npm start`), with a 300 s tolerance. A missing, wrong or stale signature answers 401 with the one message ' +
    '"Invalid webhook signature".',
  'Each event id is processed once (a repeat answers 200 with `duplicate: true`). Handled: ' +
    '`checkout.session.completed` (metadata `org_id` and `kind` tier|package: sets the tier, or deposits the ' +
    'package’s tokens), `invoice.paid` (renewal recorded, status active), `invoice.payment_failed` (status ' +
    'past_due, owner emailed), `customer.subscription.updated` (tier from metadata.tier or the price’s ' +
    'lookup_key/metadata), `customer.subscription.deleted` (free tier, cancelled), `payment_intent.succeeded` of ' +
    'intents from POST /billing/create-payment-intent (tokens deposited). Any other signed event is acknowledged ' +
    'with 200.',
].join('\n\n');

export const billingWebhook = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/billing/webhook',
  auth: 'signature',
  summary: 'Payment provider events (signed)',
  description: WEBHOOK_DESCRIPTION,
  response: WebhookReceipt,
});

export const paymentsWebhook = defineRoute({
  group,
  tags: ['Inbound webhooks', ...tags],
  method: 'POST',
  path: '/webhooks/payments',
  auth: 'signature',
  summary: 'Payment provider events (signed; same as POST /billing/webhook)',
  description: WEBHOOK_DESCRIPTION,
  response: WebhookReceipt,
});

export const getSubscription = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/billing/subscription',
  auth: 'bearer',
  summary: 'The organization’s subscription',
  response: Subscription,
  errors: [404],
});

export const startCheckout = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/billing/checkout',
  auth: 'bearer',
  summary: 'Start a checkout for a tier or a token package (organization admin)',
  description:
    '`tier`: pro or teams (free needs none and enterprise is arranged by contract: 400). Alternatively ' +
    '`package_slug` buys a token package in one payment. Exactly one of the two.',
  body: z
    .object({ tier: tierSlug.optional(), package_slug: z.string().min(1).max(64).optional() })
    .refine((body) => (body.tier === undefined) !== (body.package_slug === undefined), {
      message: 'Give either tier or package_slug',
    }),
  response: Checkout,
});

export const openPortal = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/billing/portal',
  auth: 'bearer',
  summary: 'A billing portal session URL (organization admin)',
  description:
    '404 before the organization has a billing account. The local provider has no portal: its URL leads back ' +
    'to the subscription.',
  response: z.object({ url: z.string() }),
  errors: [404],
});

export const createPaymentIntent = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/billing/create-payment-intent',
  auth: 'bearer',
  summary: 'A payment intent for a token package (organization admin)',
  description:
    'The same `idempotency_key` (kept for 24 hours) answers the same intent; reusing it for another package is ' +
    'a 409. Tokens are deposited when the payments webhook reports the intent succeeded.',
  body: z.object({
    package_slug: z.string().min(1).max(64),
    idempotency_key: z.string().min(1).max(200).optional(),
  }),
  response: z.object({
    id: z.string(),
    client_secret: z.string(),
    amount: z.number().int(),
    currency: z.string(),
    status: z.string(),
    package_slug: z.string(),
    tokens: z.number().int(),
    idempotency_key: z.string(),
  }),
  errors: [409],
});

export const getUsage = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/billing/usage',
  auth: 'bearer',
  summary: 'This period’s usage, the tier and its limits',
  response: z.object({
    period: Period,
    tier: z.string(),
    limits: Limits.extend({ monthly_tokens: z.number().int() }),
    usage: Usage,
  }),
  errors: [404],
});

export const planSummary = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/billing/plan-summary',
  auth: 'bearer',
  summary: 'The tier’s limits, usage and what remains',
  response: z.object({
    tier: Tier,
    subscription: Subscription.nullable(),
    period: Period,
    usage: Usage,
    remaining: z.object({
      agents: z.number().nullable(),
      pipelines: z.number().nullable(),
      members: z.number().nullable(),
      monthly_tokens: z.number().nullable(),
    }),
    violations: z.array(Violation),
  }),
  errors: [404],
});

export const validateDowngrade = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/billing/validate-downgrade',
  auth: 'bearer',
  permission: 'read',
  summary: 'Whether current usage fits a tier’s limits',
  body: z.object({ tier: tierSlug }),
  response: z.object({
    allowed: z.boolean(),
    current_tier: z.string(),
    tier: z.string(),
    usage: Usage,
    violations: z.array(Violation),
  }),
});

export const changePlan = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/billing/change-plan',
  auth: 'bearer',
  summary: 'Change the tier (organization admin)',
  description:
    'To a pricier tier: answers `checkout` (the tier changes when the payment completes). To a cheaper tier: ' +
    'changes at once when usage fits its limits, else 422 UNPROCESSABLE with the violations ({ resource, used, ' +
    'limit }) in `details`. The provider-side subscription is not changed by a downgrade here; use the billing ' +
    'portal for that.',
  body: z.object({ tier: tierSlug }),
  response: z.object({
    changed: z.boolean(),
    previous_tier: z.string(),
    tier: z.string(),
    checkout: Checkout.nullable(),
  }),
  errors: [422],
});

export const billingOverview = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/billing/overview',
  auth: 'bearer',
  summary: 'Revenue by product and AI spend',
  description:
    'Revenue: the payments recorded by the payments webhook for this organization (all time, paid ones). AI ' +
    'spend: tokens consumed this month, valued at the smallest package’s price per token. Infrastructure spend ' +
    'is not measured (null).',
  response: z.object({
    currency: z.string(),
    revenue: z.object({
      total_cents: z.number().int(),
      payments: z.number().int(),
      failed_payments: z.number().int(),
      by_product: z.array(
        z.object({ product: z.string(), amount_cents: z.number().int(), payments: z.number().int() }),
      ),
    }),
    ai_spend: z.object({
      period: Period,
      tokens_consumed: z.number().int(),
      estimated_value_cents: z.number().int(),
    }),
    // OpenAPI 3.0 has no null type: null only is a nullable type whose one allowed value is null.
    infrastructure_spend: z.null().meta({ type: 'string', nullable: true, enum: [null] }),
    counts: z.string(),
  }),
});

const topupRoutes = (path: string, name: string) => ({
  get: defineRoute({
    group,
    tags,
    method: 'GET',
    path,
    auth: 'bearer',
    summary: `${name} settings with the available packages`,
    response: AutoTopup,
  }),
  post: defineRoute({
    group,
    tags,
    method: 'POST',
    path,
    auth: 'bearer',
    summary: `Set ${name.toLowerCase()} (organization admin)`,
    description: 'Stores the settings; `package_slug` must name a token package (400 otherwise).',
    body: AutoTopupInput,
    response: AutoTopup,
  }),
  put: defineRoute({
    group,
    tags,
    method: 'PUT',
    path,
    auth: 'bearer',
    summary: `Set ${name.toLowerCase()} (organization admin; same as POST)`,
    body: AutoTopupInput,
    response: AutoTopup,
  }),
});

const autoTopup = topupRoutes('/billing/auto-topup', 'Auto top-up');
const creditAutoTopup = topupRoutes('/billing/credit-auto-topup', 'Credit auto top-up');
export const getAutoTopup = autoTopup.get;
export const postAutoTopup = autoTopup.post;
export const putAutoTopup = autoTopup.put;
export const getCreditAutoTopup = creditAutoTopup.get;
export const postCreditAutoTopup = creditAutoTopup.post;
export const putCreditAutoTopup = creditAutoTopup.put;

const sessionParams = z.object({ sessionId: z.string().regex(/^cs_local_[a-f0-9]{1,64}$/) });

export const localCheckoutPage = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/billing/local-checkout/{sessionId}',
  auth: 'none',
  summary: 'Local checkout page (local payments provider only)',
  description: 'HTML with a confirm button. 404 whenever Stripe is configured or in aws mode.',
  params: sessionParams,
  envelope: 'raw',
  contentType: 'text/html',
  errors: [404],
});

export const confirmLocalCheckout = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/billing/local-checkout/{sessionId}/confirm',
  auth: 'none',
  summary: 'Confirm a local checkout (local payments provider only)',
  description:
    'Sends a signed `checkout.session.completed` event for the session to the payments webhook code (deposits ' +
    'the package’s tokens or activates the tier) and answers an HTML page. Confirming twice changes nothing. ' +
    '404 whenever Stripe is configured or in aws mode.',
  params: sessionParams,
  envelope: 'raw',
  contentType: 'text/html',
  errors: [404],
});
