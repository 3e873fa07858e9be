import { type TableKey, tenantPk } from '#lib/db/keys';
import type { LedgerType } from '#lib/tokens/types';

/**
 * Where the token ledger lives in the table (its writes and reads: lib/tokens/ledger.ts).
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | balance | `T#<org>` | `TOKENS` | changed only in the transaction of the entry that explains it |
 * | entry | `T#<org>` | `TOKENTX#<ISO time>#<random>` | append-only; newest last |
 * | reference | `T#<org>` | `TOKENREF#<reference id>` | makes a `reference_id` usable once per organization |
 */
export const ledgerKeys = {
  balance: (orgId: string): TableKey => ({ pk: tenantPk(orgId), sk: 'TOKENS' }),
  entry: (orgId: string, sk: string): TableKey => ({ pk: tenantPk(orgId), sk }),
  entrySort: (at: string, nonce: string): string => `TOKENTX#${at}#${nonce}`,
  entryPrefix: 'TOKENTX#',
  reference: (orgId: string, referenceId: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `TOKENREF#${referenceId}`,
  }),
};

export interface BalanceItem extends TableKey {
  balance: number;
  updated_at: string;
}

export interface EntryItem extends TableKey {
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

export interface ReferenceItem extends TableKey {
  transaction_id: string;
  entry_sk: string;
}

/** A ledger entry as the API shows it: the item without its keys. */
export type LedgerEntry = Omit<EntryItem, 'pk' | 'sk'>;

export const toEntry = ({ pk: _pk, sk: _sk, ...entry }: EntryItem): LedgerEntry => ({
  ...entry,
  balance_after: entry.balance_after ?? null,
  reference_id: entry.reference_id ?? null,
  metadata: entry.metadata ?? null,
});

/** The balance is still the one the writer read (`:before`). */
export const balanceIs = 'balance = :before';
/** …where a missing balance item is a balance of 0 (organizations created before the ledger existed). */
export const balanceIsZero = `attribute_not_exists(balance) OR ${balanceIs}`;
/** The balance covers a debit of `:needed`. */
export const balanceCovers = 'balance >= :needed';
