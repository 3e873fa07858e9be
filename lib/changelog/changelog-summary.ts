import { type ChangelogItem, type ChangelogRecord, changelogKeys, toChangelogRecord } from '#lib/changelog/changelog';
import { prefixEnd, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/**
 * GET /changelog/summary: the entries of the last `days` days (UTC, today included), grouped by the
 * day they were written and then by area (the product's slug, or `tasks`). Each group counts all its
 * entries and names their agents, and shows the newest `limit` of them.
 *
 * The entries' sort keys begin with their time, so the window is one key range of one Query (paged by
 * DynamoDB's 1 MB): the cost follows the entries written in the window, which `days` bounds, and
 * never the rest of the changelog.
 */

export interface SummaryEntry {
  id: string;
  title: string;
  agent: string | null;
  task_id: number | null;
  created_at: string;
}

export interface AreaSummary {
  area: string;
  count: number;
  agents: string[];
  entries: SummaryEntry[];
}

export interface DaySummary {
  date: string;
  total: number;
  areas: AreaSummary[];
}

export interface ChangelogSummary {
  from: string;
  to: string;
  days: number;
  total: number;
  dates: DaySummary[];
}

const DAY_MS = 86_400_000;

const dateOf = (at: Date | string): string => new Date(at).toISOString().slice(0, 10);

export async function changelogSummary(
  ctx: RequestContext,
  options: { days: number; limit: number },
): Promise<ChangelogSummary> {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  const to = dateOf(now);
  const from = dateOf(new Date(Date.parse(`${to}T00:00:00.000Z`) - (options.days - 1) * DAY_MS));
  const entries = await entriesSince(orgId, from);

  const byDate = new Map<string, Map<string, ChangelogRecord[]>>();
  for (const entry of entries) {
    const date = dateOf(entry.created_at);
    const areas = byDate.get(date) ?? new Map<string, ChangelogRecord[]>();
    byDate.set(date, areas);
    areas.set(entry.area, [...(areas.get(entry.area) ?? []), entry]);
  }
  const dates = [...byDate.entries()]
    .sort(([a], [b]) => b.localeCompare(a))
    .map(([date, areas]): DaySummary => {
      const summaries = [...areas.entries()]
        .map(([area, inArea]) => areaSummary(area, inArea, options.limit))
        .sort((a, b) => b.count - a.count || a.area.localeCompare(b.area));
      return { date, total: summaries.reduce((sum, area) => sum + area.count, 0), areas: summaries };
    });
  return { from, to, days: options.days, total: entries.length, dates };
}

/** One area's entries (newest first): counted, their agents named, the newest `limit` shown. */
function areaSummary(area: string, entries: ChangelogRecord[], limit: number): AreaSummary {
  const agents = [...new Set(entries.map((entry) => entry.agent).filter((agent) => agent !== null))].sort();
  return {
    area,
    count: entries.length,
    agents,
    entries: entries.slice(0, limit).map(({ id, title, agent, task_id, created_at }) => ({
      id,
      title,
      agent,
      task_id,
      created_at,
    })),
  };
}

/** The organization's entries written on `from` (a UTC date) or later, newest first. */
async function entriesSince(orgId: string, from: string): Promise<ChangelogRecord[]> {
  const entries: ChangelogRecord[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :end',
      ExpressionAttributeValues: {
        ':pk': tenantPk(orgId),
        ':from': `${changelogKeys.prefix}${from}`,
        ':end': prefixEnd(changelogKeys.prefix),
      },
      ScanIndexForward: false,
      ExclusiveStartKey: startKey,
    });
    entries.push(...((result.Items ?? []) as ChangelogItem[]).map(toChangelogRecord));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return entries;
}
