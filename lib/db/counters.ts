import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import type { TableKey } from '#lib/db/keys';

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
