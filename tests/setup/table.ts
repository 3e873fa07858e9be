import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { ensureTable } from '#infra/local/table';

// Runs before each test file, before the file imports anything that reads the configuration.
process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
process.env.TABLE_NAME = `test-${randomUUID()}`;
process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'aos-test-'));

const client = new DynamoDBClient({
  region: 'us-east-1',
  endpoint: process.env.DYNAMODB_ENDPOINT,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
await ensureTable(client, process.env.TABLE_NAME);
client.destroy();
