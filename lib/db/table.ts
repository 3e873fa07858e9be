import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DeleteCommandInput,
  type DeleteCommandOutput,
  GetCommand,
  type GetCommandInput,
  type GetCommandOutput,
  PutCommand,
  type PutCommandInput,
  type PutCommandOutput,
  QueryCommand,
  type QueryCommandInput,
  type QueryCommandOutput,
  UpdateCommand,
  type UpdateCommandInput,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import type { TableKey } from '#lib/db/keys';
import { takeReadAhead } from '#lib/db/request-scope';
import { ConditionFailedError } from '#lib/errors';

export { isConditionFailed } from '#lib/errors';

/**
 * The table gateway: the single-item operations and Query on the service's one table, so that domain
 * modules speak in keys and expressions and never import the AWS SDK. The table name is filled in
 * here; everything else is DynamoDB's own request shape. A write refused by its ConditionExpression
 * throws `ConditionFailedError` carrying the write's `reason` code (default `condition`).
 *
 * @example
 * const { Item } = await table.get({ Key: identityKeys.user(id) });
 * await table.update({ Key, UpdateExpression, ConditionExpression: itemExists, reason: 'missing' });
 */
type On<T> = Omit<T, 'TableName'>;
/** A conditional write names why its condition exists, so a refusal can be told apart by code. */
type Conditional<T> = On<T> & { reason?: string };
interface Options {
  abortSignal?: AbortSignal;
}

export type QueryResult = QueryCommandOutput;
export type QueryInput = On<QueryCommandInput>;

async function conditional<T>(reason: string | undefined, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      throw Object.assign(new ConditionFailedError(reason ?? 'condition'), { cause: error });
    }
    throw error;
  }
}

/** An eventually consistent read of a whole item is answered by the request's read-ahead when it holds the key. */
function readAhead(input: On<GetCommandInput>): GetCommandOutput | undefined {
  if (input.ConsistentRead || input.ProjectionExpression || input.AttributesToGet) return undefined;
  const held = takeReadAhead(input.Key as TableKey);
  return held ? { Item: held.item, $metadata: {} } : undefined;
}

export const table = {
  get: async (input: On<GetCommandInput>, options?: Options): Promise<GetCommandOutput> =>
    readAhead(input) ?? db.send(new GetCommand({ ...input, TableName: TABLE }), options),
  put: ({ reason, ...input }: Conditional<PutCommandInput>, options?: Options): Promise<PutCommandOutput> =>
    conditional(reason, () => db.send(new PutCommand({ ...input, TableName: TABLE }), options)),
  update: ({ reason, ...input }: Conditional<UpdateCommandInput>, options?: Options): Promise<UpdateCommandOutput> =>
    conditional(reason, () => db.send(new UpdateCommand({ ...input, TableName: TABLE }), options)),
  delete: ({ reason, ...input }: Conditional<DeleteCommandInput>, options?: Options): Promise<DeleteCommandOutput> =>
    conditional(reason, () => db.send(new DeleteCommand({ ...input, TableName: TABLE }), options)),
  query: (input: QueryInput, options?: Options): Promise<QueryResult> =>
    db.send(new QueryCommand({ ...input, TableName: TABLE }), options),
};
