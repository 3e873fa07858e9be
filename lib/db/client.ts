import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#lib/config';

/**
 * The one document client, built once per cold start. Locally it points at DynamoDB Local
 * (DYNAMODB_ENDPOINT) with placeholder credentials, since DynamoDB Local accepts any.
 */
const local = config.dynamoEndpoint !== undefined;

export const dynamo = new DynamoDBClient({
  region: config.region,
  ...(local
    ? {
        endpoint: config.dynamoEndpoint,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : {}),
});

export const db = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  unmarshallOptions: { wrapNumbers: false },
});

export const TABLE = config.tableName;
