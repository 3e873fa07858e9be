import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export type QueryInput = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>;

/**
 * Offset paging over a `Query`: follows `LastEvaluatedKey` through the whole key range so that `total`
 * is exact, keeping only the items of the requested window (and those `keep` accepts). Cost grows with
 * the size of the range, not the page: collections that can grow large keep a maintained count instead.
 *
 * @example
 * const { items, total } = await queryPage({ KeyConditionExpression: 'pk = :pk', ... }, { limit: 50, offset: 0 });
 */
export async function queryPage<T = Record<string, unknown>>(
  input: QueryInput,
  page: PageRequest,
  keep: (item: T) => boolean = () => true,
): Promise<Page<T>> {
  const items: T[] = [];
  let total = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await db.send(new QueryCommand({ ...input, TableName: TABLE, ExclusiveStartKey: startKey }));
    for (const item of (result.Items ?? []) as T[]) {
      if (!keep(item)) continue;
      if (total >= page.offset && items.length < page.limit) items.push(item);
      total += 1;
    }
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return { items, total };
}

/** A bounded read: what a Query gave up to its bound, and whether that was everything it selects. */
export interface Bounded<T> {
  items: T[];
  complete: boolean;
}

/**
 * The first `max` items a Query selects, following its pages no further: for reads that must stay
 * bounded however large the collection grows (reports, health checks). One item past `max` is read to
 * tell whether any were left: `complete` is false when some were.
 *
 * @example
 * const { items, complete } = await queryUpTo<AgentItem>({ KeyConditionExpression: 'pk = :pk', ... }, 500);
 */
export async function queryUpTo<T = Record<string, unknown>>(input: QueryInput, max: number): Promise<Bounded<T>> {
  const items: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await db.send(
      new QueryCommand({ ...input, TableName: TABLE, Limit: max + 1 - items.length, ExclusiveStartKey: startKey }),
    );
    items.push(...((result.Items ?? []) as T[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey && items.length <= max);
  return { items: items.slice(0, max), complete: items.length <= max };
}

/**
 * How many items a Query selects, counting at most `max` (`Select: COUNT`: DynamoDB reads them but
 * sends none). `complete` is false when there were more than `max`.
 */
export async function countUpTo(input: QueryInput, max: number): Promise<{ count: number; complete: boolean }> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await db.send(
      new QueryCommand({
        ...input,
        TableName: TABLE,
        Select: 'COUNT',
        Limit: max + 1 - count,
        ExclusiveStartKey: startKey,
      }),
    );
    count += result.Count ?? 0;
    startKey = result.LastEvaluatedKey;
  } while (startKey && count <= max);
  return { count: Math.min(count, max), complete: count <= max };
}

/** Every item of a Query, page after page: for ranges known to be small (counter shards, a day's buckets). */
export async function queryAll(input: QueryInput): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await db.send(new QueryCommand({ ...input, TableName: TABLE, ExclusiveStartKey: startKey }));
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}
