import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  BatchWriteCommand,
  type BatchWriteCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import type { TableKey } from '#lib/db/keys';

/** Batch calls sent side by side; DynamoDB answers unprocessed keys when it is busy, retried with back-off. */
const PARALLEL_CALLS = 4;

const backOff = (round: number) => new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** round)));

/**
 * Reads several items by key with BatchGetItem (100 keys a call, retrying unprocessed keys), in the
 * order of `keys`; an absent item is `undefined`. `consistent` reads strongly consistently.
 *
 * @example
 * const [user, membership] = await getMany([userKey, membershipKey]);
 */
export async function getMany<T = Record<string, unknown>>(
  keys: TableKey[],
  options: { consistent?: boolean } = {},
): Promise<Array<T | undefined>> {
  const found = new Map<string, T>();
  const chunks: TableKey[][] = [];
  for (let start = 0; start < keys.length; start += 100) chunks.push(keys.slice(start, start + 100));
  // A few calls in flight at once: thousands of keys take a handful of round trips, not dozens.
  for (let start = 0; start < chunks.length; start += PARALLEL_CALLS) {
    await Promise.all(
      chunks.slice(start, start + PARALLEL_CALLS).map((chunk) => getChunk(chunk, found, options.consistent === true)),
    );
  }
  return keys.map((key) => found.get(`${key.pk}|${key.sk}`));
}

async function getChunk<T>(chunk: TableKey[], found: Map<string, T>, consistent: boolean): Promise<void> {
  let pending: Record<string, unknown>[] | undefined = chunk.map((key) => ({ ...key }));
  for (let round = 0; pending && pending.length > 0; round += 1) {
    if (round > 0) await backOff(round);
    const result: BatchGetCommandOutput = await db.send(
      new BatchGetCommand({
        RequestItems: { [TABLE]: { Keys: pending, ...(consistent ? { ConsistentRead: true } : {}) } },
      }),
    );
    for (const item of result.Responses?.[TABLE] ?? []) found.set(`${item.pk}|${item.sk}`, item as T);
    pending = result.UnprocessedKeys?.[TABLE]?.Keys;
  }
}

/**
 * Puts and deletes items with BatchWriteItem (25 a call, retrying unprocessed ones). Not atomic: for
 * derived items (search postings) whose readers tolerate a missing or extra one, never for records.
 *
 * @example
 * await writeMany({ puts: postings, deletes: stalePostingKeys });
 */
export async function writeMany(input: { puts?: Record<string, unknown>[]; deletes?: TableKey[] }): Promise<void> {
  const requests: Record<string, unknown>[] = [
    ...(input.puts ?? []).map((Item) => ({ PutRequest: { Item } })),
    ...(input.deletes ?? []).map((key) => ({ DeleteRequest: { Key: { ...key } } })),
  ];
  const chunks: Record<string, unknown>[][] = [];
  for (let start = 0; start < requests.length; start += 25) chunks.push(requests.slice(start, start + 25));
  for (let start = 0; start < chunks.length; start += PARALLEL_CALLS) {
    await Promise.all(chunks.slice(start, start + PARALLEL_CALLS).map((chunk) => writeChunk(chunk)));
  }
}

/** One BatchWriteItem call of at most 25 write requests, until none is left unprocessed. */
export async function writeChunk(chunk: Record<string, unknown>[]): Promise<void> {
  let pending: Record<string, unknown>[] | undefined = chunk;
  for (let round = 0; pending && pending.length > 0; round += 1) {
    if (round > 0) await backOff(round);
    const result: BatchWriteCommandOutput = await db.send(
      new BatchWriteCommand({ RequestItems: { [TABLE]: pending as never } }),
    );
    pending = result.UnprocessedItems?.[TABLE] as Record<string, unknown>[] | undefined;
  }
}
