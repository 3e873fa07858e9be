import {
  ACTOR_TYPES,
  type ActivityItem,
  type ActivityRecord,
  type ActorType,
  activityKeys,
  hourOf,
  retentionStartHour,
  toActivityRecord,
  windowStartHour,
} from '#lib/activity/activity-keys';
import { type Page, type PageRequest, queryAll } from '#lib/db/paging';
import { type QueryInput, table } from '#lib/db/table';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/**
 * The read side of the activity log: the filtered list, newest first with an exact `total`, and the
 * stats of the last 24 hours and 7 days. Which key ranges each reads, and why a request costs what its
 * page and window hold rather than what the log holds: lib/activity/activity-keys.ts.
 */

export interface ActivityFilter {
  actor_type?: ActorType;
  actor_id?: string;
  action?: string;
}

/** Past the end of any hour or sort key that starts with a given prefix (`~` sorts after digits and `#`). */
const END = '~';

const epochSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** The entries of one partition (of the table or an index), newest first; those past retention left out. */
function entriesQuery(orgId: string, type: ActorType, filter: ActivityFilter, now: Date): QueryInput {
  const live = { FilterExpression: 'expires_at > :now', ScanIndexForward: false };
  if (filter.actor_id !== undefined) {
    const both = filter.action !== undefined;
    return {
      ...live,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ...(both ? { FilterExpression: 'expires_at > :now AND #action = :action' } : {}),
      ...(both ? { ExpressionAttributeNames: { '#action': 'action' } } : {}),
      ExpressionAttributeValues: {
        ':pk': activityKeys.byActorPk(orgId, type, filter.actor_id),
        ':now': epochSeconds(now),
        ...(both ? { ':action': filter.action } : {}),
      },
    };
  }
  if (filter.action !== undefined) {
    return {
      ...live,
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: {
        ':pk': activityKeys.byActionPk(orgId, type, filter.action),
        ':now': epochSeconds(now),
      },
    };
  }
  return {
    ...live,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': activityKeys.entryPk(orgId, type), ':now': epochSeconds(now) },
  };
}

/** The first `wanted` items of a Query (all of them when `wanted` is undefined). */
async function firstOf(input: QueryInput, wanted?: number): Promise<ActivityItem[]> {
  const items: ActivityItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    if (wanted !== undefined && items.length >= wanted) break;
    const result = await table.query({
      ...input,
      ...(wanted !== undefined ? { Limit: wanted - items.length } : {}),
      ExclusiveStartKey: startKey,
    });
    items.push(...((result.Items ?? []) as ActivityItem[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return wanted === undefined ? items : items.slice(0, wanted);
}

const newestFirst = (a: ActivityItem, b: ActivityItem) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0);

/** Sums `attribute` over the count items of a key range of the organization's counts. */
async function sumCounts(orgId: string, from: string, to: string, attribute: string): Promise<number> {
  let sum = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ProjectionExpression: '#count',
      ExpressionAttributeNames: { '#count': attribute },
      ExpressionAttributeValues: { ':pk': activityKeys.countPk(orgId), ':from': from, ':to': to },
      ExclusiveStartKey: startKey,
    });
    for (const item of result.Items ?? []) sum += Number(item[attribute] ?? 0);
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return sum;
}

/** The number of entries a filter without both actor_id and action selects, from the counts. */
function countedTotal(orgId: string, filter: ActivityFilter, now: Date): Promise<number> {
  const start = retentionStartHour(now);
  const attribute = filter.actor_type ?? 'total';
  if (filter.actor_id !== undefined) {
    const prefix = activityKeys.actorPrefix(filter.actor_id);
    return sumCounts(orgId, `${prefix}${start}`, `${prefix}${END}`, attribute);
  }
  if (filter.action !== undefined) {
    const prefix = activityKeys.actionPrefix(filter.action);
    return sumCounts(orgId, `${prefix}${start}`, `${prefix}${END}`, attribute);
  }
  return sumCounts(orgId, `${activityKeys.hourPrefix}${start}`, `${activityKeys.hourPrefix}${END}`, attribute);
}

/**
 * GET /activity-log: the organization's entries, newest first, filtered by actor type, actor id and
 * action (combined: all must hold).
 */
export async function listActivity(
  ctx: RequestContext,
  filter: ActivityFilter,
  page: PageRequest,
): Promise<Page<ActivityRecord>> {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  const types = filter.actor_type ? [filter.actor_type] : [...ACTOR_TYPES];
  const queries = types.map((type) => entriesQuery(orgId, type, filter, now));

  if (filter.actor_id !== undefined && filter.action !== undefined) {
    // No count holds this combination: the actor's entries of the action are read, and counted.
    const all = (await Promise.all(queries.map((query) => firstOf(query)))).flat().sort(newestFirst);
    return { items: all.slice(page.offset, page.offset + page.limit).map(toActivityRecord), total: all.length };
  }
  const total = await countedTotal(orgId, filter, now);
  const wanted = page.offset + page.limit;
  if (page.limit === 0 || page.offset >= total) return { items: [], total };
  // The newest `wanted` of each partition hold the newest `wanted` of them all.
  const merged = (await Promise.all(queries.map((query) => firstOf(query, wanted)))).flat().sort(newestFirst);
  return { items: merged.slice(page.offset, wanted).map(toActivityRecord), total };
}

export interface WindowStats {
  since: string;
  total: number;
  by_actor_type: Record<ActorType, number>;
  by_action: Record<string, number>;
}

export interface ActivityStats {
  generated_at: string;
  last_24h: WindowStats;
  last_7d: WindowStats;
}

const HOURS_7D = 168;
const HOURS_24H = 24;

function windowStats(
  since: string,
  hours: Record<string, unknown>[],
  actions: Record<string, unknown>[],
  start: string,
): WindowStats {
  const byType = Object.fromEntries(ACTOR_TYPES.map((type) => [type, 0])) as Record<ActorType, number>;
  let total = 0;
  for (const item of hours.filter((hour) => String(hour.hour) >= start)) {
    total += Number(item.total ?? 0);
    for (const type of ACTOR_TYPES) byType[type] += Number(item[type] ?? 0);
  }
  const byAction = new Map<string, number>();
  for (const item of actions.filter((action) => String(action.hour) >= start)) {
    const action = String(item.action);
    byAction.set(action, (byAction.get(action) ?? 0) + Number(item.total ?? 0));
  }
  const sorted = [...byAction].sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  return { since, total, by_actor_type: byType, by_action: Object.fromEntries(sorted) };
}

/**
 * GET /activity-log/stats: entries by actor type and by action in the last 24 hours and the last 7 days,
 * counted by the hour: a window is the current hour and the 23 (167) before it. Two Queries: the hour
 * counts and the action counts (gsi1) of the 7 days, the 24 hours being their last part.
 */
export async function activityStats(ctx: RequestContext): Promise<ActivityStats> {
  const orgId = requirePrincipal(ctx).orgId;
  const now = ctx.ports.clock.now();
  const start7d = windowStartHour(now, HOURS_7D);
  const start24h = windowStartHour(now, HOURS_24H);
  const end = `${hourOf(now)}#${END}`;
  const [hours, actions] = await Promise.all([
    queryAll({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': activityKeys.countPk(orgId),
        ':from': `${activityKeys.hourPrefix}${start7d}`,
        ':to': `${activityKeys.hourPrefix}${end}`,
      },
    }),
    queryAll({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': activityKeys.hourlyActionsPk(orgId), ':from': start7d, ':to': end },
    }),
  ]);
  const since = (hour: string) => `${hour}:00:00.000Z`;
  return {
    generated_at: now.toISOString(),
    last_24h: windowStats(since(start24h), hours, actions, start24h),
    last_7d: windowStats(since(start7d), hours, actions, start7d),
  };
}

/**
 * The newest `limit` entries of an actor type with any of `actions`: one Query of each action's index
 * partition, `limit` long (GET /dashboard/overview's recent runs).
 */
export async function latestEntries(
  orgId: string,
  type: ActorType,
  actions: string[],
  limit: number,
  now: Date,
): Promise<ActivityRecord[]> {
  const found = await Promise.all(actions.map((action) => firstOf(entriesQuery(orgId, type, { action }, now), limit)));
  return found.flat().sort(newestFirst).slice(0, limit).map(toActivityRecord);
}
