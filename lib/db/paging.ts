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
