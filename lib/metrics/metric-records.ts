import { type CounterChange, counterWrite, shardOf } from '#lib/db/counters';
import { queryAll } from '#lib/db/paging';
import type { TransactItem } from '#lib/db/transactions';
import {
  DAY_TTL_DAYS,
  dayOf,
  INSTANCE_COUNTERS,
  INSTANCE_SHARDS,
  type InstanceCounter,
  metricKeys,
  ORG_SHARDS,
  type OrgDayCounter,
  type OrgTotal,
} from '#lib/metrics/metric-keys';

/**
 * The writes and reads of the dashboards' counters (keys: lib/metrics/metric-keys.ts). A write changes
 * one shard picked at random; a read sums every shard of a counter with one Query.
 */

const epochSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** Changes of the organization's totals, as a write for the transaction of the change they count. */
export function orgTotalsWrite(orgId: string, add: Partial<Record<OrgTotal, number>>): TransactItem {
  return counterWrite({
    key: { pk: metricKeys.orgPk(orgId), sk: metricKeys.totals(shardOf(ORG_SHARDS)) },
    add: add as Record<string, number>,
  });
}

/** Changes of the organization's counters of the day of `now`. */
export function orgDayWrite(orgId: string, now: Date, add: Partial<Record<OrgDayCounter, number>>): TransactItem {
  const day = dayOf(now);
  const change: CounterChange = {
    key: { pk: metricKeys.orgPk(orgId), sk: metricKeys.day(day, shardOf(ORG_SHARDS)) },
    add: add as Record<string, number>,
    set: { day, expires_at: epochSeconds(new Date(`${day}T00:00:00.000Z`)) + DAY_TTL_DAYS * 86_400 },
  };
  return counterWrite(change);
}

/** Changes of the instance totals (`organizations`, `agents`, `tasks`, `executions`). */
export function instanceTotalsWrite(add: Partial<Record<InstanceCounter, number>>): TransactItem {
  return counterWrite({
    key: { pk: metricKeys.instancePk, sk: metricKeys.totals(shardOf(INSTANCE_SHARDS)) },
    add: add as Record<string, number>,
  });
}

/** The number attributes of `items` summed (the shards of one counter). */
function sumOf(items: Record<string, unknown>[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const item of items) {
    for (const [attribute, value] of Object.entries(item)) {
      if (typeof value === 'number' && attribute !== 'expires_at') sums[attribute] = (sums[attribute] ?? 0) + value;
    }
  }
  return sums;
}

/** The organization's totals: its shards summed (one Query). A counter never written reads as absent. */
export async function readOrgTotals(orgId: string): Promise<Record<string, number>> {
  return sumOf(
    await queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': metricKeys.orgPk(orgId), ':prefix': metricKeys.totalsPrefix },
    }),
  );
}

/** The organization's day counters from `from` to `to` (days, inclusive), by day (one Query). */
export async function readOrgDays(
  orgId: string,
  from: string,
  to: string,
): Promise<Map<string, Record<string, number>>> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: {
      ':pk': metricKeys.orgPk(orgId),
      ':from': `${metricKeys.dayPrefix}${from}`,
      ':to': `${metricKeys.dayPrefix}${to}#~`,
    },
  });
  const byDay = new Map<string, Record<string, unknown>[]>();
  for (const item of items) {
    const day = String(item.day);
    byDay.set(day, [...(byDay.get(day) ?? []), item]);
  }
  return new Map([...byDay].map(([day, shards]) => [day, sumOf(shards)]));
}

/** The instance totals, every counter present (0 when never written): its shards summed (one Query). */
export async function readInstanceTotals(): Promise<Record<InstanceCounter, number>> {
  const sums = sumOf(
    await queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': metricKeys.instancePk, ':prefix': metricKeys.totalsPrefix },
    }),
  );
  return Object.fromEntries(INSTANCE_COUNTERS.map((name) => [name, sums[name] ?? 0])) as Record<
    InstanceCounter,
    number
  >;
}
