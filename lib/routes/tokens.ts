import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { freeFormObject, pagingQuery } from '#lib/http/schemas';
import { LEDGER_TYPES } from '#lib/tokens/types';

/** The organization's token ledger: the `tokens` function. */

const group = 'tokens';
const tags = ['Tokens'];

export const MAX_CONSUME = 10_000_000;

const companyIdQuery = z
  .string()
  .regex(/^\d{1,12}$/, 'company_id must be a non-negative integer')
  .transform(Number)
  .optional()
  .meta({
    description:
      'Accepted for compatibility and otherwise ignored: the ledger is always that of the organization the ' +
      'request acts in (its tenant).',
  });

export const TokenTransaction = z
  .object({
    id: z.string(),
    type: z.enum(LEDGER_TYPES),
    amount: z.number().int().meta({ description: 'Signed: negative for consume, positive for credits' }),
    balance_after: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The balance right after this entry; null when the writer could not know it' }),
    action: z.string(),
    reference_id: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: z.string(),
    actor: z.string().meta({ description: '`user:<id>`, `api_key:<id>` or `system`' }),
  })
  .meta({ id: 'TokenTransaction', description: 'One entry of the append-only token ledger.' });

export const getTokenBalance = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/tokens/balance',
  auth: 'bearer',
  summary: 'The organization’s token balance',
  description:
    '`company_id` is accepted but the balance is always the organization’s the request acts in (the tenant). ' +
    'An organization that never had a ledger change has balance 0 and `updated_at: null`; new organizations ' +
    'start with the signup bonus.',
  query: z.object({ company_id: companyIdQuery }),
  response: z
    .object({
      balance: z.number().int().min(0),
      organization_id: z.string(),
      updated_at: z.string().nullable(),
    })
    .meta({ id: 'TokenBalance' }),
});

export const listTokenTransactions = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/tokens/transactions',
  auth: 'bearer',
  summary: 'The organization’s token ledger, newest first',
  description:
    '`type` filters by entry type; `meta.total` is the exact count of matching entries. `company_id` is ' +
    'accepted and ignored (the tenant’s ledger is listed).',
  query: pagingQuery.extend({ type: z.enum(LEDGER_TYPES).optional(), company_id: companyIdQuery }),
  envelope: 'list',
  response: TokenTransaction,
});

export const consumeTokens = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/tokens/consume',
  auth: 'bearer',
  permission: 'write',
  summary: 'Consume tokens from the organization’s balance',
  description: [
    'Debits `amount` (a positive integer, at most 10,000,000) and records a `consume` entry in the same transaction.',
    'When the balance is short: 402 PAYMENT_REQUIRED with `details: [{ path: "amount", message, balance, ' +
      'required }]`, and nothing changes.',
    'The balance never goes negative, also under concurrent consumes.',
    '`reference_id` makes the call idempotent per organization: a repeat answers the first result (its ' +
      'transaction and the balance right after it) with `duplicate: true` and consumes nothing, even if its ' +
      'amount differs.',
    '`company_id` is accepted and ignored (the tenant’s balance is used).',
    'When auto top-up is enabled and this consume takes the balance from at or above the threshold to below ' +
      'it, a payment for the configured package is started once (`auto_topup` names it); the tokens arrive when ' +
      'the payment succeeds.',
  ].join(' '),
  body: z.object({
    amount: z.number().int().positive().max(MAX_CONSUME),
    action: z.string().min(1).max(100),
    company_id: z.number().int().min(0).optional(),
    reference_id: z.string().min(1).max(128).optional(),
    metadata: freeFormObject({ maxDepth: 8, maxBytes: 16_384 }).optional(),
  }),
  response: z
    .object({
      transaction: TokenTransaction,
      balance: z.number().int().min(0),
      duplicate: z.boolean(),
      auto_topup: z.object({ payment_intent_id: z.string(), package_slug: z.string() }).nullable(),
    })
    .meta({ id: 'TokenConsumption' }),
  errors: [402],
});
