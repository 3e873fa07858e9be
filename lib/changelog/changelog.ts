import { itemIsNew } from '#lib/db/conditions';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import type { TransactItem } from '#lib/db/transactions';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

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

export type ChangelogRecord = ChangelogEntry & { id: string; created_at: string };

/** GET /changelog: the organization's entries, newest first, kept by agent and task when asked. */
export async function listChangelog(
  ctx: RequestContext,
  filter: { agent?: string; task_id?: number },
  page: PageRequest,
): Promise<Page<ChangelogRecord> & PageRequest> {
  const orgId = requirePrincipal(ctx).orgId;
  const agent = filter.agent?.toLowerCase();
  const result = await queryPage<ChangelogRecord & TableKey>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': changelogKeys.prefix },
      ScanIndexForward: false,
    },
    page,
    (item) =>
      (agent === undefined || (item.agent ?? '').toLowerCase() === agent) &&
      (filter.task_id === undefined || item.task_id === filter.task_id),
  );
  const items = result.items.map(({ pk: _pk, sk: _sk, ...entry }) => entry);
  return { items, total: result.total, ...page };
}
