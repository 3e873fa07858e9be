import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import type { TableKey } from '#lib/db/keys';
import type { TransactItem } from '#lib/db/transactions';

/** Where a counter lives: per tenant (`T#<org>` / `COUNTER#tasks`) or global (`COUNTER` / `COUNTER#users`). */
export const counterKey = (name: string, orgPk?: string): TableKey => ({
  pk: orgPk ?? 'COUNTER',
  sk: `COUNTER#${name}`,
});

/**
 * Hands out the next integer id of a sequence with one atomic `UpdateItem ADD`: two concurrent
 * callers never get the same number. Ids start at 1; a failed write after this wastes a number, which
 * is fine for ids.
 *
 * @example
 * const id = await nextId(counterKey('tasks', tenantPk(orgId)));
 */
export async function nextId(key: TableKey, step = 1): Promise<number> {
  const result = await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: key,
      UpdateExpression: 'ADD #value :step',
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: { ':step': step },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(result.Attributes?.value);
}

/**
 * Counters kept on write: `ADD` updates of number attributes (and, optionally, plain `SET`s such as a
 * TTL or index keys), made in the transaction of the change they count, so that a count is never
 * ahead of or behind its records. A counter that many writers change at once is split into shards
 * (`shardOf`): each write changes one shard, chosen at random, and a reader sums them all.
 *
 * Two counter writes of one item in one transaction (two changes counted in the same shard) would make
 * DynamoDB refuse the transaction; `transact` merges them into one update (`mergeCounterWrites`).
 */
export interface CounterChange {
  key: TableKey;
  /** Number attributes and what to add to each (negative to subtract). */
  add: Record<string, number>;
  /** Attributes set as given (a TTL, index keys of the counter item): the same for every write of the item. */
  set?: Record<string, unknown>;
}

/**
 * A random shard of `count` (0 … count - 1).
 *
 * @example counterWrite({ key: { pk, sk: `TOTALS#${shardOf(4)}` }, add: { tasks_todo: 1 } })
 */
export const shardOf = (count: number): number => Math.floor(Math.random() * count);

/**
 * The write of a counter change, for the caller's transaction.
 *
 * @example
 * await transact([taskPut, counterWrite({ key: { pk: `T#${org}#METRICS`, sk: 'TOTALS#0' }, add: { tasks_todo: 1 } })]);
 */
export function counterWrite(change: CounterChange): TransactItem {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const adds = Object.entries(change.add).map(([attribute, by], at) => {
    names[`#a${at}`] = attribute;
    values[`:a${at}`] = by;
    return `#a${at} :a${at}`;
  });
  const sets = Object.entries(change.set ?? {}).map(([attribute, value], at) => {
    names[`#s${at}`] = attribute;
    values[`:s${at}`] = value;
    return `#s${at} = :s${at}`;
  });
  const expression = [sets.length > 0 ? `SET ${sets.join(', ')}` : '', adds.length > 0 ? `ADD ${adds.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
  return {
    Update: {
      Key: change.key,
      UpdateExpression: expression,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
    counter: change,
  };
}

/**
 * The counter writes of one item merged into one (the adds summed), in the place of the first; every
 * other write kept as it is. `origins[i]` is the index in `items` of the write now at `i`.
 */
export function mergeCounterWrites(items: TransactItem[]): { items: TransactItem[]; origins: number[] } {
  const merged: TransactItem[] = [];
  const origins: number[] = [];
  const byKey = new Map<string, number>();
  for (const [index, item] of items.entries()) {
    const change = item.counter;
    if (!change) {
      merged.push(item);
      origins.push(index);
      continue;
    }
    const id = `${change.key.pk}|${change.key.sk}`;
    const at = byKey.get(id);
    const earlier = at === undefined ? undefined : merged[at]?.counter;
    if (at === undefined || !earlier) {
      byKey.set(id, merged.length);
      merged.push(item);
      origins.push(index);
      continue;
    }
    const add = { ...earlier.add };
    for (const [attribute, by] of Object.entries(change.add)) add[attribute] = (add[attribute] ?? 0) + by;
    merged[at] = counterWrite({ key: change.key, add, set: { ...earlier.set, ...change.set } });
  }
  return { items: merged, origins };
}
