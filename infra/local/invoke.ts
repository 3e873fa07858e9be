/**
 * `npm run invoke -- <function> events/<file>.json`: runs one function of serverless.yml on a sample
 * event and prints its result, as `serverless invoke local` would. It uses the DynamoDB of a running
 * `npm start` (found through DATA_DIR/runtime.json), or starts DynamoDB Local on DATA_DIR for the call.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureDataDir, lockDataDir, StartupError } from '#infra/local/data-dir';
import { type DynamoLocal, startDynamoLocal } from '#infra/local/dynamodb-local';
import { lambdaContext } from '#infra/local/lambda-context';
import { readServerlessFunctions } from '#infra/local/serverless-routes';
import { ensureTable } from '#infra/local/table';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const [functionName, eventFile] = process.argv.slice(2);
if (!functionName || !eventFile) {
  console.error(
    'Usage: npm run invoke -- <function> <event.json>\n  e.g. npm run invoke -- service events/http/get-health.json',
  );
  process.exit(2);
}

const functions = new Map(readServerlessFunctions().map((fn) => [fn.name, fn]));
const fn = functions.get(functionName);
if (!fn) {
  console.error(`No function "${functionName}" in serverless.yml; there are: ${[...functions.keys()].join(', ')}`);
  process.exit(2);
}
if (!existsSync(eventFile)) {
  console.error(`No event file at ${eventFile}`);
  process.exit(2);
}
const event = JSON.parse(readFileSync(eventFile, 'utf8'));

const dataDir = resolve(process.env.DATA_DIR ?? '.data');
const runtimeFile = resolve(dataDir, 'runtime.json');
let dynamo: DynamoLocal | undefined;
let release: (() => void) | undefined;
if (!process.env.DYNAMODB_ENDPOINT) {
  const running = runningInstance(runtimeFile);
  if (running) {
    process.env.DYNAMODB_ENDPOINT = running.dynamodb_endpoint;
  } else {
    try {
      // A first `npm run invoke` before any `npm start` makes the data directory, as start does.
      ensureDataDir(dataDir);
      release = lockDataDir(dataDir, 0);
    } catch (error) {
      console.error(error instanceof StartupError ? error.message : error);
      process.exit(1);
    }
    dynamo = await startDynamoLocal({ dataDir: resolve(dataDir, 'dynamodb') });
    process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  }
}

/** The running `npm start` that runtime.json names, or nothing when that process is gone (a crash). */
function runningInstance(file: string): { pid: number; dynamodb_endpoint: string } | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const runtime = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; dynamodb_endpoint: string };
    process.kill(runtime.pid, 0);
    return runtime;
  } catch {
    console.error(`${file} is left from an npm start that no longer runs; starting DynamoDB Local for this call.`);
    return undefined;
  }
}

try {
  const { config } = await import('#lib/config');
  const client = new DynamoDBClient({
    region: config.region,
    endpoint: config.dynamoEndpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(client, config.tableName);
  client.destroy();
  // What the function queues is handed to its consumers here too, as it would be under npm start.
  // Imported once the DynamoDB address is set: the queue keeps its messages in the table.
  const { connectLocalQueues } = await import('#infra/local/queues');
  connectLocalQueues();
  const module = await import(pathToFileURL(resolve(`${fn.module}.ts`)).href);
  const result = await module[fn.exportName](event, lambdaContext(fn.name));
  console.log(JSON.stringify(result, null, 2));
} finally {
  await dynamo?.stop();
  release?.();
}
