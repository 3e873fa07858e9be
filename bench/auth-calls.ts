/**
 * DynamoDB calls made by one authenticated GET /auth/me, with a JWT and with an API key, counted by a
 * middleware on the real client (DynamoDB Local), and the time per request over 200 requests.
 * Prints the figures; asserts nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynamoLocal } from '#infra/local/dynamodb-local';
import { ensureTable } from '#infra/local/table';

process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
// 400 requests a run from one organization: measure them on enterprise limits, not a free-tier 429.
process.env.RATE_LIMIT_TIER = 'enterprise';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'aos-bench-auth-'));
const dynamo = await startDynamoLocal();
process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
process.env.TABLE_NAME = 'bench-auth';
const admin = new DynamoDBClient({
  region: 'us-east-1',
  endpoint: dynamo.endpoint,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
await ensureTable(admin, 'bench-auth');

const { dynamo: client } = await import('#lib/db/client');
const counts = new Map<string, number>();
client.middlewareStack.add(
  (next, context) => async (args) => {
    counts.set(context.commandName as string, (counts.get(context.commandName as string) ?? 0) + 1);
    return next(args);
  },
  { step: 'initialize', name: 'countCalls' },
);
const { call, newUser } = await import('#tests/support/identity');
const { handler: auth } = await import('#functions/http/auth');
const { handler: apiKeys } = await import('#functions/http/api-keys');

const user = await newUser('bench');
const created = await call(apiKeys, 'POST', `/organizations/${user.orgId}/api-keys`, {
  token: user.token,
  body: { name: 'bench', scopes: ['read'] },
});
const apiKey = created.body.data.key as string;

for (const [label, token] of [
  ['JWT', user.token],
  ['API key', apiKey],
] as const) {
  counts.clear();
  const response = await call(auth, 'GET', '/auth/me', { token });
  const calls = [...counts.entries()].map(([name, n]) => `${n} ${name.replace('Command', '')}`).join(', ');
  const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const started = performance.now();
  for (let i = 0; i < 200; i++) await call(auth, 'GET', '/auth/me', { token });
  const perRequest = (performance.now() - started) / 200;
  console.log(
    `GET /auth/me with ${label}: status ${response.status}, ${total} DynamoDB call(s): ${calls}; ` +
      `${perRequest.toFixed(2)} ms per request in process (DynamoDB Local)`,
  );
}
await dynamo.stop();
