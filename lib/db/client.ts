import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#lib/config';
import { dropReadAhead, writeGate } from '#lib/db/request-scope';
import { databaseUnavailable, isDatabaseUnavailable } from '#lib/db/unavailable';

/**
 * The one document client, built once per cold start. Locally it points at DynamoDB Local
 * (DYNAMODB_ENDPOINT) with placeholder credentials, since DynamoDB Local accepts any.
 */
const local = config.dynamoEndpoint !== undefined;

/**
 * Attempts per call (the SDK's standard retry: throttling and network failures, with jittered backoff).
 * With each attempt bounded by DYNAMODB_TIMEOUT_MS, a call ends within a few seconds either way; the
 * SDK's own limit is a socket idle for five minutes, which would hold a request until the function timed
 * out and API Gateway answered for it, without the envelope or Retry-After.
 */
export const MAX_ATTEMPTS = 3;

export const dynamo = new DynamoDBClient({
  region: config.region,
  maxAttempts: MAX_ATTEMPTS,
  requestHandler: {
    connectionTimeout: Math.min(config.dynamoTimeoutMs, 1_000),
    requestTimeout: config.dynamoTimeoutMs,
    throwOnRequestTimeout: true,
  },
  ...(local
    ? {
        endpoint: config.dynamoEndpoint,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : {}),
});

// Outermost, so it sees an error only after the SDK's own retries: an outage or overload becomes the
// domain's 503 here, once, instead of a 500 in every module that reads the table.
dynamo.middlewareStack.add(
  (next) =>
    async function databaseUnavailableBoundary(args) {
      try {
        return await next(args);
      } catch (error) {
        throw isDatabaseUnavailable(error) ? databaseUnavailable(error) : error;
      }
    },
  { step: 'initialize', name: 'databaseUnavailable', priority: 'high' },
);

// The SDK's logger middleware filters every call's input and output for a log line, even with no logger
// to write it (the default logger's methods do nothing): CPU on every call for nothing. This client has
// no SDK logger; the service logs what it needs itself.
dynamo.middlewareStack.remove('loggerMiddleware');

const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

// A request's writes wait until it is admitted (lib/db/request-scope.ts), whatever module sends them.
dynamo.middlewareStack.add(
  (next, context) =>
    async function holdWrites(args) {
      if (WRITES.has(context.commandName as string)) {
        const gate = writeGate();
        if (gate) await gate;
        dropReadAhead();
      }
      return next(args);
    },
  { step: 'initialize', name: 'holdWrites' },
);

export const db = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  unmarshallOptions: { wrapNumbers: false },
});

export const TABLE = config.tableName;
