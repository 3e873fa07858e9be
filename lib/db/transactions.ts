import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, MAX_ATTEMPTS, TABLE } from '#lib/db/client';
import { itemIsNew } from '#lib/db/conditions';
import { type CounterChange, mergeCounterWrites } from '#lib/db/counters';
import { databaseUnavailable, isThrottledCancellation } from '#lib/db/unavailable';
import { ConditionFailedError, ConflictError } from '#lib/errors';

export { itemExists, itemIsNew } from '#lib/db/conditions';

type SdkItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
type On<T> = T extends object ? Omit<T, 'TableName'> : never;

/**
 * One write of a transaction: DynamoDB's own shape without the table name (the gateway fills it in),
 * plus the `reason` code a refused condition of this write is reported under, and, for a counter write
 * (lib/db/counters.ts `counterWrite`), the change it makes, so that two of one item can be merged.
 */
export type TransactItem = (
  | { Put: On<NonNullable<SdkItem['Put']>> }
  | { Update: On<NonNullable<SdkItem['Update']>> }
  | { Delete: On<NonNullable<SdkItem['Delete']>> }
  | { ConditionCheck: On<NonNullable<SdkItem['ConditionCheck']>> }
) & { reason?: string; counter?: CounterChange };

/** What a refused condition becomes, by the write's reason code (or, for old callers, its index). */
export type Conflicts = Record<string | number, () => Error>;

/**
 * A guard item that makes a value unique across a scope (a slug in a tenant, an email in the instance).
 * Put it in the same transaction as the record it guards; release it with `releaseUnique` in the
 * transaction that deletes or renames the record.
 */
export const uniqueKey = (scope: string, value: string) => ({
  pk: `UNIQUE#${scope}#${value.toLowerCase()}`,
  sk: 'UNIQUE',
});

/** Claims a unique value; refused with reason `unique` (or the one given) when it is taken. */
export function claimUnique(scope: string, value: string, owner: string, reason = 'unique'): TransactItem {
  return {
    Put: { Item: { ...uniqueKey(scope, value), owner }, ConditionExpression: itemIsNew },
    reason,
  };
}

export function releaseUnique(scope: string, value: string): TransactItem {
  return { Delete: { Key: uniqueKey(scope, value) } };
}

/** How often a transaction cancelled by a colliding one (not by a condition) is sent again. */
const COLLISION_RETRIES = 3;

/**
 * DynamoDB reports a transaction whose items were throttled as a cancellation, which the SDK does not
 * retry: sent again here after a growing pause, as the client retries every other throttled call (the
 * same number of attempts in all), before the caller hears 503.
 */
const THROTTLED_RETRIES = MAX_ATTEMPTS - 1;
const THROTTLED_BASE_DELAY_MS = 200;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function withTable({ reason: _reason, counter: _counter, ...item }: TransactItem): SdkItem {
  const [operation, input] = Object.entries(item)[0] as [string, object];
  return { [operation]: { ...input, TableName: TABLE } } as SdkItem;
}

/**
 * Runs a `TransactWriteItems` (all items land or none do). When a condition fails, the refused write's
 * `reason` is looked up in `conflicts` (then its index) and thrown as that domain error, so a duplicate
 * slug becomes a 409 right here instead of a 500 further up; an unmapped refusal throws
 * `ConditionFailedError` with the reason code. A transaction that collided with another one in flight
 * on the same items (a product's task counts, say) changed nothing, so it is sent again after a short
 * random pause, a few times, before the caller hears 409; one cancelled for throttling likewise, after
 * growing pauses, before the caller hears 503. Counter writes of one item (lib/db/counters.ts)
 * are merged into one first, since DynamoDB refuses a transaction that names an item twice.
 *
 * @example
 * await transact([claimUnique(`product-slug#${org}`, slug, id, 'slug-taken'), { Put: { Item } }],
 *   { 'slug-taken': () => new ConflictError('A product with this slug exists') });
 */
export async function transact(given: TransactItem[], conflicts: Conflicts = {}): Promise<void> {
  const { items, origins } = mergeCounterWrites(given);
  const command = new TransactWriteCommand({ TransactItems: items.map(withTable) });
  let throttled = 0;
  let collided = 0;
  for (;;) {
    try {
      await db.send(command);
      return;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      for (const [index, reason] of reasons.entries()) {
        if (reason.Code !== 'ConditionalCheckFailed') continue;
        const code = items[index]?.reason;
        const toError = (code !== undefined ? conflicts[code] : undefined) ?? conflicts[origins[index] ?? index];
        throw toError ? toError() : new ConditionFailedError(code ?? 'changed');
      }
      if (isThrottledCancellation(reasons)) {
        if (throttled >= THROTTLED_RETRIES) throw databaseUnavailable(error);
        // Half the window and a random part of the other half: never at once, never all together.
        await pause(THROTTLED_BASE_DELAY_MS * 2 ** throttled * (0.5 + Math.random() / 2));
        throttled += 1;
        continue;
      }
      if (!reasons.some((reason) => reason.Code === 'TransactionConflict')) throw error;
      if (collided >= COLLISION_RETRIES) {
        throw new ConflictError('Another request changed these records at the same moment; try again');
      }
      await pause(10 + Math.random() * 40 * 2 ** collided);
      collided += 1;
    }
  }
}
