import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import { databaseUnavailable, isThrottledCancellation } from '#lib/db/unavailable';
import { ConflictError } from '#lib/errors';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** An attribute that must not exist yet: the write creates the item or fails. */
export const itemIsNew = 'attribute_not_exists(pk)';
/** The item must already exist: an update never creates a half-filled record. */
export const itemExists = 'attribute_exists(pk)';

/**
 * A guard item that makes a value unique across a scope (a slug in a tenant, an email in the instance).
 * Put it in the same transaction as the record it guards; release it with `releaseUnique` in the
 * transaction that deletes or renames the record.
 */
export const uniqueKey = (scope: string, value: string) => ({
  pk: `UNIQUE#${scope}#${value.toLowerCase()}`,
  sk: 'UNIQUE',
});

export function claimUnique(scope: string, value: string, owner: string): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: { ...uniqueKey(scope, value), owner },
      ConditionExpression: itemIsNew,
    },
  };
}

export function releaseUnique(scope: string, value: string): TransactItem {
  return { Delete: { TableName: TABLE, Key: uniqueKey(scope, value) } };
}

/** How often a transaction cancelled by a colliding one (not by a condition) is sent again. */
const COLLISION_RETRIES = 3;

/**
 * Runs a `TransactWriteItems` (all items land or none do). When a condition fails, the reason at each
 * index is looked up in `conflicts` and thrown as that domain error, so a duplicate slug becomes a 409
 * right here instead of a 500 further up. A transaction that collided with another one in flight on the
 * same items (a product's task counts, say) changed nothing, so it is sent again after a short random
 * pause, a few times, before the caller hears 409.
 *
 * @example
 * await transact([claimUnique('product-slug#o1', slug, id), { Put: { TableName: TABLE, Item } }],
 *   { 0: () => new ConflictError('A product with this slug exists') });
 */
export async function transact(
  items: TransactItem[],
  conflicts: Record<number, () => Error> = {},
): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await db.send(new TransactWriteCommand({ TransactItems: items }));
      return;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      for (const [index, reason] of reasons.entries()) {
        if (reason.Code !== 'ConditionalCheckFailed') continue;
        const toError = conflicts[index];
        throw toError ? toError() : new ConflictError('The record was changed by another request; try again');
      }
      if (isThrottledCancellation(reasons)) throw databaseUnavailable(error);
      if (!reasons.some((reason) => reason.Code === 'TransactionConflict')) throw error;
      if (attempt >= COLLISION_RETRIES) {
        throw new ConflictError('Another request changed these records at the same moment; try again');
      }
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40 * 2 ** attempt));
    }
  }
}
