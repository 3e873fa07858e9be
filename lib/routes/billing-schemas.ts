import * as z from 'zod';

/** The shapes of the billing routes' records (lib/routes/billing.ts). */

export const tierSlug = z.string().min(1).max(32);

export const Limits = z.object({
  agents: z.number().nullable(),
  pipelines: z.number().nullable(),
  members: z.number().nullable(),
});

export const Tier = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    price_monthly_cents: z.number().int().nullable().meta({ description: 'null: sold by contract' }),
    currency: z.string(),
    rate_limits: z.object({ per_minute: z.number(), per_hour: z.number() }),
    monthly_tokens: z.number().int(),
    limits: Limits.meta({ description: 'null means unlimited' }),
  })
  .meta({ id: 'BillingTier' });

export const TokenPackage = z
  .object({
    slug: z.string(),
    name: z.string(),
    tokens: z.number().int(),
    price_cents: z.number().int(),
    currency: z.string(),
  })
  .meta({ id: 'TokenPackage' });

export const Usage = z
  .object({
    agents: z.number().int(),
    pipelines: z.number().int(),
    members: z.number().int(),
    tokens_consumed: z.number().int().meta({ description: 'This calendar month (UTC), from consume ledger entries' }),
  })
  .meta({ id: 'BillingUsage' });

export const Period = z.object({ start: z.string(), end: z.string() });

export const Violation = z
  .object({
    resource: z.enum(['agents', 'pipelines', 'members']),
    used: z.number().int(),
    limit: z.number().int(),
  })
  .meta({ id: 'PlanViolation' });

export const Subscription = z
  .object({
    org_id: z.string(),
    tier: z.string(),
    status: z
      .string()
      .meta({ description: 'active, past_due (a payment failed), cancelled, or the provider’s status' }),
    customer_id: z.string().nullable(),
    subscription_id: z.string().nullable(),
    current_period_end: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Subscription' });

export const Checkout = z
  .object({
    id: z.string(),
    url: z.string().meta({ description: 'Where the customer pays (Stripe, or the local checkout page)' }),
    kind: z.enum(['tier', 'package']),
    tier: z.string().nullable(),
    package: z.string().nullable(),
  })
  .meta({ id: 'CheckoutSession' });

export const AutoTopup = z
  .object({
    enabled: z.boolean(),
    threshold: z.number().int().nullable(),
    package_slug: z.string().nullable(),
    updated_at: z.string().nullable(),
    available_packages: z.array(TokenPackage),
  })
  .meta({ id: 'AutoTopup' });

export const AutoTopupInput = z.object({
  enabled: z.boolean(),
  threshold: z.number().int().positive().meta({ description: 'Top up when the token balance falls below this' }),
  package_slug: z.string().min(1).max(64),
});

export const WebhookReceipt = z
  .object({
    received: z.literal(true),
    event: z.string(),
    duplicate: z
      .boolean()
      .meta({ description: 'true when this event id was processed before; nothing was done again' }),
    actions: z.array(
      z.object({
        type: z.string(),
        id: z.string().optional(),
        status: z.string().optional(),
        detail: z.string().optional(),
      }),
    ),
  })
  .meta({ id: 'PaymentsWebhookReceipt' });
