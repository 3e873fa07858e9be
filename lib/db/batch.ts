import { BatchGetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import type { TableKey } from '#lib/db/keys';

/**
 * Reads several items by key with BatchGetItem (100 keys a call, retrying unprocessed keys), in the
 * order of `keys`; an absent item is `undefined`.
 *
 * @example
 * const [user, membership] = await getMany([userKey, membershipKey]);
 */
export async function getMany<T = Record<string, unknown>>(keys: TableKey[]): Promise<Array<T | undefined>> {
  const found = new Map<string, T>();
  for (let start = 0; start < keys.length; start += 100) {
    let pending: Record<string, unknown>[] | undefined = keys
      .slice(start, start + 100)
      .map((key) => ({ ...key }));
    while (pending && pending.length > 0) {
      const result: BatchGetCommandOutput = await db.send(
        new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: pending } } }),
      );
      for (const item of result.Responses?.[TABLE] ?? []) found.set(`${item.pk}|${item.sk}`, item as T);
      pending = result.UnprocessedKeys?.[TABLE]?.Keys;
    }
  }
  return keys.map((key) => found.get(`${key.pk}|${key.sk}`));
}
