/**
 * `npm start`: the whole service on this machine. DynamoDB Local (from the amplify-dynamodb-simulator
 * package, with `java`) keeps its data under DATA_DIR; the local gateway serves every function of
 * serverless.yml on PORT. Ctrl-C stops both.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoLocal, JavaMissingError, startDynamoLocal } from '#infra/local/dynamodb-local';
import { type Gateway, startGateway } from '#infra/local/gateway';
import { freePort, portInUse } from '#infra/local/ports';
import { connectLocalQueues } from '#infra/local/queues';
import { type LocalSchedules, startSchedules } from '#infra/local/schedules';
import { ensureTable } from '#infra/local/table';

process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// Lambda runs Node 22; this notice about future SDK releases only concerns local runs on Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  // The DynamoDB endpoint must be in the environment before the configuration module is first read.
  const externalDynamo = process.env.DYNAMODB_ENDPOINT;
  const dynamoPort = externalDynamo ? undefined : await freePort();
  if (dynamoPort) process.env.DYNAMODB_ENDPOINT = `http://127.0.0.1:${dynamoPort}`;
  const { config } = await import('#lib/config').catch((error: unknown) =>
    fail(error instanceof Error ? error.message : String(error)),
  );

  if (await portInUse(config.port)) {
    fail(
      `Port ${config.port} is already in use (is another \`npm start\` running?).\n` +
        `Choose another one, for example:  PORT=${config.port + 1} npm start`,
    );
  }

  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const started = performance.now();

  let dynamo: DynamoLocal | undefined;
  let gateway: Gateway | undefined;
  let schedules: LocalSchedules | undefined;
  let stopping = false;
  const runtimeFile = resolve(dataDir, 'runtime.json');

  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping…');
    schedules?.stop();
    await gateway?.close().catch(() => undefined);
    await dynamo?.stop().catch(() => undefined);
    rmSync(runtimeFile, { force: true });
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));
  // npm and tsx run this file in a child process. Should the parent die without passing on a signal
  // (SIGKILL), this process would live on as an orphan holding the port and DynamoDB Local: notice it.
  const parentPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== parentPid) void stop(0);
  }, 1_000).unref();

  try {
    if (dynamoPort) {
      dynamo = await startDynamoLocal({ dataDir: resolve(dataDir, 'dynamodb'), port: dynamoPort });
    }
    const client = new DynamoDBClient({
      region: config.region,
      endpoint: config.dynamoEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const created = await ensureTable(client, config.tableName);
    client.destroy();
    gateway = await startGateway({
      port: config.port,
      onRequest: process.env.QUIET ? undefined : (line) => console.log(line),
    });
    schedules = startSchedules();
    const queues = connectLocalQueues();
    writeFileSync(
      runtimeFile,
      JSON.stringify(
        { pid: process.pid, port: gateway.port, dynamodb_endpoint: config.dynamoEndpoint },
        null,
        2,
      ),
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      [
        '',
        `Agent Operations Service is running (ready in ${seconds} s)`,
        `  API      http://localhost:${gateway.port}/api`,
        `  Docs     http://localhost:${gateway.port}/api/docs`,
        `  Health   http://localhost:${gateway.port}/api/health`,
        `  Data     ${dataDir}${created ? ' (new table created)' : ''}`,
        `  Payments ${config.stripeSecretKey ? 'Stripe' : `local provider, webhook secret ${(await import('#lib/app/secrets')).secrets.paymentsWebhookSecret}`}`,
        `  DynamoDB ${config.dynamoEndpoint}${dynamo ? ' (DynamoDB Local)' : ' (external)'}`,
        `  Schedules ${schedules.schedules.map((schedule) => `${schedule.fn.name} ${schedule.expression}`).join(', ') || 'none'}`,
        `  Queues   ${queues.map((consumer) => `${consumer.queue} -> ${consumer.fn.name}`).join(', ') || 'none'}`,
        '',
        'Press Ctrl-C to stop.',
      ].join('\n'),
    );
  } catch (error) {
    console.error(error instanceof JavaMissingError ? error.message : error);
    await stop(1);
  }
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

await main();
