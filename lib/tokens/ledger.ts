import type { Principal, RequestContext } from '#lib/context';
import { randomBase62 } from '#lib/crypto/secrets';
import { tenantPk } from '#lib/db/keys';
import { type Page, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, PaymentRequiredError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { LedgerType } from '#lib/tokens/types';

/**
 * The organization's token ledger: one balance item (`T#<org>` / `TOKENS`) and an append-only list of
 * entries (`T#<org>` / `TOKENTX#<ISO time>#<random>`). The balance changes only in the same
 * transaction as the entry that explains it, so the sum of the entries is always the balance.
 */

export { LEDGER_TYPES, type LedgerType } from '#lib/tokens/types';

export const balanceKey = (orgId: string) => ({ pk: tenantPk(orgId), sk: 'TOKENS' });
/** Makes a `reference_id` usable once per organization, whatever the type of the entry. */
export const referenceKey = (orgId: string, referenceId: string) => ({
  pk: tenantPk(orgId),
  sk: `TOKENREF#${referenceId}`,
});

const ENTRY_PREFIX = 'TOKENTX#';

/** Who made a change, as the ledger records it: `user:<id>` or `api_key:<id>`. */
const actorOf = (principal: Principal): string =>
  principal.userId !== undefined ? `user:${principal.userId}` : `api_key:${principal.keyId}`;

interface BalanceItem {
  pk: string;
  sk: string;
  balance: number;
  updated_at: string;
}

interface EntryItem {
  pk: string;
  sk: string;
  id: string;
  type: LedgerType;
  amount: number;
  balance_after: number | null;
  action: string;
  reference_id: string | null;
  metadata: Record<string, unknown> | null;
  created_at: string;
  actor: string;
}

interface ReferenceItem {
  pk: string;
  sk: string;
  transaction_id: string;
  entry_sk: string;
}

export type LedgerEntry = Omit<EntryItem, 'pk' | 'sk'>;

const toEntry = ({ pk: _pk, sk: _sk, ...entry }: EntryItem): LedgerEntry => ({
  ...entry,
  balance_after: entry.balance_after ?? null,
  reference_id: entry.reference_id ?? null,
  metadata: entry.metadata ?? null,
});

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
 * The TransactWriteItems of one ledger change, for callers to put in their own transaction:
 * 0 the balance update (`ADD balance :amount`, guarded so it never goes negative), 1 the entry, and
 * 2 (only with a reference id) the idempotency guard. Indices matter for `transact`'s conflict map.
 */
export function ledgerWrites(change: LedgerChange): { writes: TransactItem[]; entry: LedgerEntry } {
  const at = change.now.toISOString();
  const id = `tx_${randomBase62(16)}`;
  const sk = `${ENTRY_PREFIX}${at}#${randomBase62(8)}`;
  const known = change.balanceBefore;
  if (known !== undefined && known + change.amount < 0) {
    throw new Error('ledgerWrites: the change would make the balance negative');
  }
  const conditions: string[] = [];
  const values: Record<string, unknown> = { ':amount': change.amount, ':at': at };
  if (known !== undefined) {
    // A missing balance item is a balance of 0 (organizations created before the ledger existed).
    conditions.push(
      known === 0 ? '(attribute_not_exists(balance) OR balance = :before)' : 'balance = :before',
    );
    values[':before'] = known;
  } else if (change.amount < 0) {
    conditions.push('balance >= :needed');
    values[':needed'] = -change.amount;
  }
  const entryItem: EntryItem = {
    pk: tenantPk(change.orgId),
    sk,
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
        Key: balanceKey(change.orgId),
        UpdateExpression: 'ADD balance :amount SET updated_at = :at',
        ...(conditions.length > 0 ? { ConditionExpression: conditions.join(' AND ') } : {}),
        ExpressionAttributeValues: values,
      },
    },
    { Put: { Item: entryItem, ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
  if (change.referenceId !== undefined) {
    const guard: ReferenceItem = {
      ...referenceKey(change.orgId, change.referenceId),
      transaction_id: id,
      entry_sk: sk,
    };
    writes.push({ Put: { Item: guard, ConditionExpression: 'attribute_not_exists(pk)' } });
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
  const found = await table.get({ Key: balanceKey(orgId), ConsistentRead: true });
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
        ':tx': ENTRY_PREFIX,
        ...(input.type ? { ':type': input.type } : {}),
      },
      ...(input.type
        ? { FilterExpression: '#type = :type', ExpressionAttributeNames: { '#type': 'type' } }
        : {}),
      // Sort keys start with the ISO time, so reading backwards is newest first.
      ScanIndexForward: false,
    },
    input,
  );
  return { items: result.items.map(toEntry), total: result.total };
}

export interface ConsumeResult {
  transaction: LedgerEntry;
  balance: number;
  duplicate: boolean;
}

class BalanceMoved extends Error {}
class DuplicateReference extends Error {}

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
      now: ctx.clock.now(),
      balanceBefore: balance,
    });
    try {
      await transact(writes, {
        0: () => new BalanceMoved(),
        2: () => new DuplicateReference(),
      });
      return { transaction: entry, balance: balance - input.amount, duplicate: false };
    } catch (error) {
      // A duplicate is answered by the next round's reference lookup; a moved balance or a colliding
      // transaction (ConflictError from `transact`) by reading the balance again.
      if (
        !(
          error instanceof BalanceMoved ||
          error instanceof DuplicateReference ||
          error instanceof ConflictError
        )
      ) {
        throw error;
      }
      await sleep(Math.random() * Math.min(200, 5 * 2 ** Math.min(attempt, 6)));
    }
  }
  throw new ConflictError('The token balance is changing too fast; try again');
}

/** The result of the consume that first used `referenceId`, or undefined when there was none. */
async function earlierResult(orgId: string, referenceId: string): Promise<ConsumeResult | undefined> {
  const guard = await table.get({ Key: referenceKey(orgId, referenceId), ConsistentRead: true });
  const reference = guard.Item as ReferenceItem | undefined;
  if (!reference) return undefined;
  const found = await table.get({
    Key: { pk: tenantPk(orgId), sk: reference.entry_sk },
    ConsistentRead: true,
  });
  const entry = toEntry(found.Item as EntryItem);
  // The first result: the balance right after that change, not the balance now.
  return {
    transaction: entry,
    balance: entry.balance_after ?? (await getBalance(orgId)).balance,
    duplicate: true,
  };
}
