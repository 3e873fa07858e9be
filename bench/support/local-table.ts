import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoLocal, startDynamoLocal } from '#infra/local/dynamodb-local';
import { ensureTable } from '#infra/local/table';

/**
 * What every in-process benchmark starts with: quiet logs, the enterprise rate limits, a scratch
 * DATA_DIR, an in-memory DynamoDB Local and the table `name` in it, all set in the environment before
 * the service's modules (which read the configuration once) are imported.
 *
 * @example
 * const dynamo = await benchTable('bench-login');
 * const { handler } = await import('#functions/http/auth');
 */
export async function benchTable(name: string): Promise<DynamoLocal> {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.RATE_LIMIT_TIER = 'enterprise';
  process.env.DATA_DIR = mkdtempSync(join(tmpdir(), `aos-${name}-`));
  const dynamo = await startDynamoLocal();
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TABLE_NAME = name;
  const admin = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: dynamo.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(admin, name);
  admin.destroy();
  return dynamo;
}
