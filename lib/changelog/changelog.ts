import { itemIsNew } from '#lib/db/conditions';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import type { TransactItem } from '#lib/db/transactions';

/**
 * The organization's changelog: what got done, by whom, in which product. Entries are written in the
 * same transaction as the change they record (a task reaching done), so each completion has exactly
 * one. GET /changelog and its summary and feed read them (monitoring).
 *
 * | record | pk | sk |
 * |---|---|---|
 * | entry | `T#<org>` | `CHANGELOG#<time>#<task id>` |
 */
export const changelogKeys = {
  entry: (orgId: string, id: string): TableKey => ({ pk: tenantPk(orgId), sk: `CHANGELOG#${id}` }),
  prefix: 'CHANGELOG#',
};

export interface ChangelogEntry {
  title: string;
  area: string;
  agent: string | null;
  task_id: number | null;
  product: string | null;
}

export function changelogWrite(orgId: string, entry: ChangelogEntry, now: Date): TransactItem {
  const at = now.toISOString();
  const id = `${at}#${pad(entry.task_id ?? 0)}`;
  return {
    Put: {
      Item: { ...changelogKeys.entry(orgId, id), id, ...entry, created_at: at },
      ConditionExpression: itemIsNew,
    },
  };
}
