import { itemIsNew } from '#lib/db/conditions';
import { pad, prefixEnd, type TableKey, tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, type QueryInput, queryPage } from '#lib/db/paging';
import type { TransactItem } from '#lib/db/transactions';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/**
 * The organization's changelog: what got done, by whom, in which product. Entries are written in the
 * same transaction as the change they record (a task reaching done), so each completion has exactly
 * one. GET /changelog, its summary (lib/changelog/changelog-summary.ts) and its RSS feed
 * (lib/changelog/changelog-feed.ts) read them (monitoring).
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | entry | `T#<org>` | `CHANGELOG#<time>#<task id>` | |
 * | … by agent | gsi1 `T#<org>#CHANGELOG#AGENT#<agent, lowercased>` | `<time>#<task id>` | entries with an agent |
 * | … by product | gsi2 `T#<org>#CHANGELOG#PRODUCT#<slug>` | `<time>#<task id>` | entries with a product |
 *
 * An entry's `area` is what the work was for: its product's slug, or `tasks` for work outside any
 * product. The indexes let a list or feed of one agent or one product read that agent's or product's
 * entries only, not the organization's whole changelog.
 */
export const changelogKeys = {
  entry: (orgId: string, id: string): TableKey => ({ pk: tenantPk(orgId), sk: `CHANGELOG#${id}` }),
  prefix: 'CHANGELOG#',
  byAgentPk: (orgId: string, agent: string): string =>
    `${tenantPk(orgId)}#CHANGELOG#AGENT#${agent.trim().toLowerCase()}`,
  byProductPk: (orgId: string, product: string): string => `${tenantPk(orgId)}#CHANGELOG#PRODUCT#${product}`,
};

/** The area of work outside any product. */
export const NO_PRODUCT_AREA = 'tasks';

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
      Item: {
        ...changelogKeys.entry(orgId, id),
        ...(entry.agent ? { gsi1pk: changelogKeys.byAgentPk(orgId, entry.agent), gsi1sk: id } : {}),
        ...(entry.product ? { gsi2pk: changelogKeys.byProductPk(orgId, entry.product), gsi2sk: id } : {}),
        id,
        ...entry,
        created_at: at,
      },
      ConditionExpression: itemIsNew,
    },
  };
}

export type ChangelogRecord = ChangelogEntry & { id: string; created_at: string };

export type ChangelogItem = ChangelogRecord &
  TableKey &
  Partial<Record<'gsi1pk' | 'gsi1sk' | 'gsi2pk' | 'gsi2sk', string>>;

/** An entry as the API shows it: the item without its keys. */
export const toChangelogRecord = (item: ChangelogItem): ChangelogRecord => ({
  id: item.id,
  title: item.title,
  area: item.area,
  agent: item.agent ?? null,
  task_id: item.task_id ?? null,
  product: item.product ?? null,
  created_at: item.created_at,
});

/**
 * The Query of an organization's entries, newest first: of one agent (ignoring case) or one product
 * through their indexes, else the whole changelog. `agent` wins when both are given; the caller keeps
 * the product's entries among them.
 */
export function changelogQuery(orgId: string, filter: { agent?: string; product?: string }): QueryInput {
  if (filter.agent !== undefined) {
    return {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': changelogKeys.byAgentPk(orgId, filter.agent) },
      ScanIndexForward: false,
    };
  }
  if (filter.product !== undefined) {
    return {
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': changelogKeys.byProductPk(orgId, filter.product) },
      ScanIndexForward: false,
    };
  }
  return {
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
    ExpressionAttributeValues: {
      ':pk': tenantPk(orgId),
      ':prefix': changelogKeys.prefix,
      ':end': prefixEnd(changelogKeys.prefix),
    },
    ScanIndexForward: false,
  };
}

/**
 * GET /changelog: the organization's entries, newest first, kept by agent and task when asked. An
 * agent's entries are read from the agent index, so the cost follows that agent's entries.
 */
export async function listChangelog(
  ctx: RequestContext,
  filter: { agent?: string; task_id?: number },
  page: PageRequest,
): Promise<Page<ChangelogRecord> & PageRequest> {
  const orgId = requirePrincipal(ctx).orgId;
  const result = await queryPage<ChangelogItem>(
    changelogQuery(orgId, { ...(filter.agent !== undefined ? { agent: filter.agent } : {}) }),
    page,
    (item) => filter.task_id === undefined || item.task_id === filter.task_id,
  );
  return { items: result.items.map(toChangelogRecord), total: result.total, ...page };
}
