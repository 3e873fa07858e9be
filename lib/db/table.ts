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

/**
 * The table gateway: the single-item operations and Query on the service's one table, so that domain
 * modules speak in keys and expressions and never import the AWS SDK. The table name is filled in
 * here; everything else is DynamoDB's own request shape.
 *
 * @example
 * const { Item } = await table.get({ Key: identityKeys.user(id) });
 */
type On<T> = Omit<T, 'TableName'>;
interface Options {
  abortSignal?: AbortSignal;
}

export type QueryResult = QueryCommandOutput;
export type QueryInput = On<QueryCommandInput>;

export const table = {
  get: (input: On<GetCommandInput>, options?: Options): Promise<GetCommandOutput> =>
    db.send(new GetCommand({ ...input, TableName: TABLE }), options),
  put: (input: On<PutCommandInput>, options?: Options): Promise<PutCommandOutput> =>
    db.send(new PutCommand({ ...input, TableName: TABLE }), options),
  update: (input: On<UpdateCommandInput>, options?: Options): Promise<UpdateCommandOutput> =>
    db.send(new UpdateCommand({ ...input, TableName: TABLE }), options),
  delete: (input: On<DeleteCommandInput>, options?: Options): Promise<DeleteCommandOutput> =>
    db.send(new DeleteCommand({ ...input, TableName: TABLE }), options),
  query: (input: QueryInput, options?: Options): Promise<QueryResult> =>
    db.send(new QueryCommand({ ...input, TableName: TABLE }), options),
};

/** Whether a write was refused by its ConditionExpression (the domain maps it to its own error). */
export const isConditionFailed = (error: unknown): boolean =>
  error instanceof ConditionalCheckFailedException;
