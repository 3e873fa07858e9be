import { randomBase62 } from '#lib/crypto/secrets';
import { allOf, itemIsNew } from '#lib/db/conditions';
import { tenantPk } from '#lib/db/keys';
import { type Page, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, PaymentRequiredError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import { orgDayWrite, orgTotalsWrite } from '#lib/metrics/metric-records';
import {
  type BalanceItem,
  balanceCovers,
  balanceIs,
  balanceIsZero,
  type EntryItem,
  type LedgerEntry,
  ledgerKeys,
  type ReferenceItem,
  toEntry,
} from '#lib/tokens/ledger-keys';
import type { LedgerType } from '#lib/tokens/types';

/**
 * The organization's token ledger: one balance item and an append-only list of entries (keys and item
 * types: lib/tokens/ledger-keys.ts). The balance changes only in the same transaction as the entry that
 * explains it, so the sum of the entries is always the balance.
 */

export type { LedgerEntry } from '#lib/tokens/ledger-keys';
export { LEDGER_TYPES, type LedgerType } from '#lib/tokens/types';

/** Who made a change, as the ledger records it: `user:<id>` or `api_key:<id>`. */
const actorOf = (principal: Principal): string =>
  principal.userId !== undefined ? `user:${principal.userId}` : `api_key:${principal.keyId}`;

export interface LedgerChange {
  orgId: string;
  type: LedgerType;
  /** Signed: negative for debits (consume), positive for credits. */
  amount: number;
  action: string;
  referenceId?: string;
  metadata?: Record<string, unknown>;
  /** `user:<id>`, `api_key:<id>` or `system`. */
  actor: string;
  now: Date;
  /**
   * The balance the writer read before the change (0 for a new organization). When given, the update
   * is conditional on the balance still being exactly that, so `balance_after` is exact; callers retry
   * on a failed condition. Without it, debits are only conditional on `balance >= -amount` and the entry
   * records `balance_after: null` because a transaction cannot return the value ADD produced.
   */
  balanceBefore?: number;
}

/**
 * The TransactWriteItems of one ledger change, for callers to put in their own transaction: the balance
 * update (`ADD balance :amount`, guarded so it never goes negative; refused with reason
 * `balance-moved`), the entry, and (only with a reference id) the idempotency guard (refused with
 * reason `reference-used`); a `consume` also adds its tokens to the organization's `tokens_used`
 * counters, of all time and of the day (lib/metrics), which the dashboards read.
 */
export function ledgerWrites(change: LedgerChange): { writes: TransactItem[]; entry: LedgerEntry } {
  const at = change.now.toISOString();
  const id = `tx_${randomBase62(16)}`;
  const sk = ledgerKeys.entrySort(at, randomBase62(8));
  const known = change.balanceBefore;
  if (known !== undefined && known + change.amount < 0) {
    throw new Error('ledgerWrites: the change would make the balance negative');
  }
  const conditions: string[] = [];
  const values: Record<string, unknown> = { ':amount': change.amount, ':at': at };
  if (known !== undefined) {
    conditions.push(known === 0 ? balanceIsZero : balanceIs);
    values[':before'] = known;
  } else if (change.amount < 0) {
    conditions.push(balanceCovers);
    values[':needed'] = -change.amount;
  }
  const entryItem: EntryItem = {
    ...ledgerKeys.entry(change.orgId, sk),
    id,
    type: change.type,
    amount: change.amount,
    balance_after: known === undefined ? null : known + change.amount,
    action: change.action,
    reference_id: change.referenceId ?? null,
    metadata: change.metadata ?? null,
    created_at: at,
    actor: change.actor,
  };
  const writes: TransactItem[] = [
    {
      Update: {
        Key: ledgerKeys.balance(change.orgId),
        UpdateExpression: 'ADD balance :amount SET updated_at = :at',
        ...(conditions.length > 0 ? { ConditionExpression: allOf(...conditions) } : {}),
        ExpressionAttributeValues: values,
      },
      reason: 'balance-moved',
    },
    { Put: { Item: entryItem, ConditionExpression: itemIsNew } },
  ];
  if (change.referenceId !== undefined) {
    const guard: ReferenceItem = {
      ...ledgerKeys.reference(change.orgId, change.referenceId),
      transaction_id: id,
      entry_sk: sk,
    };
    writes.push({ Put: { Item: guard, ConditionExpression: itemIsNew }, reason: 'reference-used' });
  }
  if (change.type === 'consume' && change.amount < 0) {
    const used = -change.amount;
    writes.push(
      orgTotalsWrite(change.orgId, { tokens_used: used }),
      orgDayWrite(change.orgId, change.now, { tokens_used: used }),
    );
  }
  return { writes, entry: toEntry(entryItem) };
}

export interface Balance {
  balance: number;
  organization_id: string;
  /** Null until the first ledger change of the organization. */
  updated_at: string | null;
}

/** The organization's balance; 0 when it never had a ledger change. Strongly consistent. */
export async function getBalance(orgId: string): Promise<Balance> {
  const found = await table.get({ Key: ledgerKeys.balance(orgId), ConsistentRead: true });
  const item = found.Item as BalanceItem | undefined;
  return { balance: item?.balance ?? 0, organization_id: orgId, updated_at: item?.updated_at ?? null };
}

export async function balanceOf(ctx: RequestContext): Promise<Balance> {
  return getBalance(requirePrincipal(ctx).orgId);
}

export async function listTransactions(
  ctx: RequestContext,
  input: { type?: LedgerType; limit: number; offset: number },
): Promise<Page<LedgerEntry>> {
  const principal = requirePrincipal(ctx);
  const result = await queryPage<EntryItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :tx)',
      ExpressionAttributeValues: {
        ':pk': tenantPk(principal.orgId),
        ':tx': ledgerKeys.entryPrefix,
        ...(input.type ? { ':type': input.type } : {}),
      },
      ...(input.type ? { FilterExpression: '#type = :type', ExpressionAttributeNames: { '#type': 'type' } } : {}),
      // Sort keys start with the ISO time, so reading backwards is newest first.
      ScanIndexForward: false,
    },
    input,
  );
  return { items: result.items.map(toEntry), total: result.total };
}

/** Tokens consumed in a period: the sum of `consume` ledger entries (their amounts, whatever the sign). */
export async function tokensConsumed(orgId: string, period: { start: string; end: string }): Promise<number> {
  let total = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      FilterExpression: '#type = :consume',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: {
        ':pk': tenantPk(orgId),
        ':from': `${ledgerKeys.entryPrefix}${period.start}`,
        ':to': `${ledgerKeys.entryPrefix}${period.end}`,
        ':consume': 'consume',
      },
      ProjectionExpression: 'amount',
      ExclusiveStartKey: startKey,
    });
    for (const item of result.Items ?? []) total += Math.abs(Number(item.amount) || 0);
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return total;
}

export interface ConsumeResult {
  transaction: LedgerEntry;
  balance: number;
  duplicate: boolean;
}

const MAX_ATTEMPTS = 60;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * POST /tokens/consume. Reads the balance, refuses with 402 when it is short (nothing written), and
 * otherwise writes the debit conditional on the balance being unchanged since the read. When another
 * change won the race, it reads again and retries: the balance can never go negative and every entry's
 * `balance_after` is exact. A `reference_id` seen before answers the first result with `duplicate: true`.
 */
export async function consume(
  ctx: RequestContext,
  input: { amount: number; action: string; referenceId?: string; metadata?: Record<string, unknown> },
): Promise<ConsumeResult> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    if (input.referenceId !== undefined) {
      const first = await earlierResult(orgId, input.referenceId);
      if (first) return first;
    }
    const { balance } = await getBalance(orgId);
    if (balance < input.amount) {
      throw new PaymentRequiredError('The token balance is too low for this consumption', [
        { path: 'amount', message: 'insufficient balance', balance, required: input.amount },
      ]);
    }
    const { writes, entry } = ledgerWrites({
      orgId,
      type: 'consume',
      amount: -input.amount,
      action: input.action,
      referenceId: input.referenceId,
      metadata: input.metadata,
      actor: actorOf(principal),
      now: ctx.ports.clock.now(),
      balanceBefore: balance,
    });
    try {
      await transact(writes);
      return { transaction: entry, balance: balance - input.amount, duplicate: false };
    } catch (error) {
      // Refused conditions (`balance-moved`, `reference-used`) and a colliding transaction are all
      // ConflictErrors: a used reference is answered by the next round's reference lookup, a moved
      // balance or a collision by reading the balance again.
      if (!(error instanceof ConflictError)) throw error;
      await sleep(Math.random() * Math.min(200, 5 * 2 ** Math.min(attempt, 6)));
    }
  }
  throw new ConflictError('The token balance is changing too fast; try again');
}

/** The result of the consume that first used `referenceId`, or undefined when there was none. */
async function earlierResult(orgId: string, referenceId: string): Promise<ConsumeResult | undefined> {
  const guard = await table.get({ Key: ledgerKeys.reference(orgId, referenceId), ConsistentRead: true });
  const reference = guard.Item as ReferenceItem | undefined;
  if (!reference) return undefined;
  const found = await table.get({ Key: ledgerKeys.entry(orgId, reference.entry_sk), ConsistentRead: true });
  const entry = toEntry(found.Item as EntryItem);
  // The first result: the balance right after that change, not the balance now.
  return {
    transaction: entry,
    balance: entry.balance_after ?? (await getBalance(orgId)).balance,
    duplicate: true,
  };
}
