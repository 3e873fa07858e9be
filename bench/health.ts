/**
 * Requests per second and latency of GET /api/health through the local gateway (one process: the
 * gateway, the handler and DynamoDB Local share this machine's cores). Prints autocannon's figures.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import autocannon from 'autocannon';
import { startDynamoLocal } from '#infra/local/dynamodb-local';
import { ensureTable } from '#infra/local/table';

process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const dynamo = await startDynamoLocal();
process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
process.env.TABLE_NAME = 'bench-health';
const client = new DynamoDBClient({
  region: 'us-east-1',
  endpoint: dynamo.endpoint,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
await ensureTable(client, 'bench-health');
const { startGateway } = await import('#infra/local/gateway');
const gateway = await startGateway({ port: 0, host: '127.0.0.1' });

try {
  for (const path of ['/api/version', '/api/health']) {
    const url = `http://127.0.0.1:${gateway.port}${path}`;
    await autocannon({ url, connections: 10, duration: 2 }); // warm-up
    const result = await autocannon({ url, connections: 10, duration: 10 });
    console.log(
      `GET ${path}: ${result.requests.average.toFixed(0)} req/s, latency p50 ${result.latency.p50} ms, ` +
        `p99 ${result.latency.p99} ms, ${result.non2xx} non-2xx, ${result.errors} errors`,
    );
  }
} finally {
  await gateway.close();
  await dynamo.stop();
}
