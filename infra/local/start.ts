/**
 * `npm start`: the whole service on this machine. DynamoDB Local (from the amplify-dynamodb-simulator
 * package, with `java`) keeps its data under DATA_DIR; the local gateway serves every function of
 * serverless.yml on PORT; the service's JSON log lines go to the terminal and to DATA_DIR/logs. Ctrl-C
 * stops both.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { checkLocalSecrets, ensureDataDir, lockDataDir, StartupError } from '#infra/local/data-dir';
import { type DynamoLocal, JavaMissingError, startDynamoLocal } from '#infra/local/dynamodb-local';
import { type Gateway, startGateway } from '#infra/local/gateway';
import { freePort, portInUse } from '#infra/local/ports';
import { type LocalSchedules, startSchedules } from '#infra/local/schedules';
import { rateMs } from '#infra/local/serverless-routes';
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
  let release: (() => void) | undefined;
  try {
    ensureDataDir(dataDir);
    release = lockDataDir(dataDir, config.port);
    checkLocalSecrets(dataDir, config);
  } catch (error) {
    release?.();
    fail(error instanceof StartupError ? error.message : String(error));
  }
  await keepLogFile(dataDir);
  const started = performance.now();
  const dynamoDir = resolve(dataDir, 'dynamodb');

  let dynamo: DynamoLocal | undefined;
  let gateway: Gateway | undefined;
  let schedules: LocalSchedules | undefined;
  let storedSchedules: { close(): void } | undefined;
  let factory: { stop(): Promise<void> } | undefined;
  let stopping = false;
  const runtimeFile = resolve(dataDir, 'runtime.json');

  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping…');
    schedules?.stop();
    storedSchedules?.close();
    // The jobs in hand get a few seconds to finish while the table is still there; a job cut short keeps
    // its lease until it runs out, and is claimed again after the next start.
    await Promise.race([factory?.stop().catch(() => undefined), new Promise((done) => setTimeout(done, 5_000))]);
    await gateway?.close().catch(() => undefined);
    await dynamo?.stop().catch(() => undefined);
    // Both are this instance's own: the lock keeps every other instance out of DATA_DIR.
    rmSync(runtimeFile, { force: true });
    release?.();
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));
  // npm runs this file in a child process (of `sh -c`). Should the parent die without passing on a signal
  // (SIGKILL), this process would live on as an orphan holding the port and DynamoDB Local: notice it.
  const parentPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== parentPid) void stop(0);
  }, 1_000).unref();

  try {
    if (dynamoPort) {
      dynamo = await startDynamoLocal({ dataDir: dynamoDir, port: dynamoPort });
      supervise(dynamo, {
        dataDir: dynamoDir,
        restart: async () => {
          dynamo = await startDynamoLocal({ dataDir: dynamoDir, port: dynamoPort });
          return dynamo;
        },
        giveUp: (message) => {
          console.error(message);
          void stop(1);
        },
        stopping: () => stopping,
      });
    }
    const client = new DynamoDBClient({
      region: config.region,
      endpoint: config.dynamoEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const created = await ensureTable(client, config.tableName).catch((error: unknown) => {
      throw unreadableDatabase(error, dynamoDir);
    });
    client.destroy();
    // Data moves an upgrade brings run before the first request sees the data (infra/migrations/pending.ts).
    const { runPendingMigrations } = await import('#infra/migrations/pending');
    await runPendingMigrations({ newTable: created });
    gateway = await startGateway({
      port: config.port,
      onRequest: process.env.QUIET ? undefined : (line) => console.log(line),
    });
    schedules = startSchedules({
      everyMsOf:
        config.pipelineReconcileIntervalSec === undefined
          ? {}
          : { pipelineReconciler: config.pipelineReconcileIntervalSec * 1000 },
      // Deployed, the factory runs for most of each minute; here it runs all the time, below.
      skip: ['factoryPool'],
    });
    // Imported here, not at the top: its modules read the configuration, which must see the endpoint set above.
    const { connectScheduler } = await import('#infra/local/scheduler');
    const stored = await connectScheduler();
    storedSchedules = stored.scheduler;
    // Imported here, like the scheduler: the queue keeps its messages in the table, whose client reads
    // the DynamoDB address at import.
    const { connectLocalQueues } = await import('#infra/local/queues');
    const queues = connectLocalQueues();
    // The factory workers of the job queue, in this process: a pool per organization with work, each
    // sized by its organization's setting (PATCH /factory-workers/config).
    const [{ startFactory }, { wirePorts }, { requestContext }] = await Promise.all([
      import('#lib/factory/factory-pool'),
      import('#lib/app/ports'),
      import('#lib/kernel/context'),
    ]);
    factory = startFactory(requestContext({ ports: wirePorts(), traceId: 'factory' }));
    writeFileSync(
      runtimeFile,
      JSON.stringify({ pid: process.pid, port: gateway.port, dynamodb_endpoint: config.dynamoEndpoint }, null, 2),
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const payments = config.stripeSecretKey
      ? 'Stripe'
      : `local provider, webhook secret ${(await import('#lib/app/secrets')).secrets.paymentsWebhookSecret}`;
    const scheduled = schedules.schedules.map(
      ({ fn, expression, everyMs }) =>
        `${fn.name} ${everyMs === rateMs(expression) ? expression : `every ${everyMs / 1000} s`}`,
    );
    console.log(
      [
        '',
        `Agent Operations Service is running (ready in ${seconds} s)`,
        `  API      http://localhost:${gateway.port}/api`,
        `  Docs     http://localhost:${gateway.port}/api/docs`,
        `  Health   http://localhost:${gateway.port}/api/health`,
        `  Data     ${dataDir}${created ? ' (new table created)' : ''}`,
        `  Logs     ${resolve(dataDir, 'logs', 'service.log')}`,
        `  Payments ${payments}`,
        `  DynamoDB ${config.dynamoEndpoint}${dynamo ? ' (DynamoDB Local)' : ' (external)'}`,
        `  Schedules ${scheduled.join(', ') || 'none'}`,
        `  Agent schedules ${stored.armed} running (from the table)`,
        `  Queues   ${queues.map((consumer) => `${consumer.queue} -> ${consumer.fn.name}`).join(', ') || 'none'}`,
        '  Factory  job-queue workers running in process (GET /api/factory-workers)',
        '',
        'Press Ctrl-C to stop.',
      ].join('\n'),
    );
  } catch (error) {
    console.error(error instanceof JavaMissingError || error instanceof StartupError ? error.message : error);
    await stop(1);
  }
}

/**
 * The service's JSON log lines also go to DATA_DIR/logs/service.log (rotated by size and day), at INFO
 * and above whatever the terminal shows, so that GET /logs can read them back (source `file`). Imported
 * here, not at the top: the logger reads POWERTOOLS_LOG_LEVEL, set above, when it is made. Lambda has no
 * such sink: there the lines go to stdout and CloudWatch keeps them.
 */
async function keepLogFile(dataDir: string): Promise<void> {
  const [{ logger }, { fileLogSink }] = await Promise.all([
    import('#lib/logger'),
    import('#lib/adapters/local/file-log-sink'),
  ]);
  const file = fileLogSink(resolve(dataDir, 'logs'));
  logger.addSink((line) => file.write(line), 'INFO');
}

/** Restarts within this window count together; this many in it and the service stops instead. */
const CRASH_WINDOW_MS = 60_000;
const MAX_CRASHES_IN_WINDOW = 3;

/**
 * Watches DynamoDB Local under a running service: when it stops without being asked (killed, crashed),
 * says so in one line and starts it again on the same port and data, so the service answers 503 for a
 * few seconds and then serves again. If it keeps dying, the service stops with what it last printed.
 */
function supervise(
  first: DynamoLocal,
  options: {
    dataDir: string;
    restart: () => Promise<DynamoLocal>;
    giveUp: (message: string) => void;
    stopping: () => boolean;
  },
): void {
  const crashes: number[] = [];
  const watch = (instance: DynamoLocal) => {
    void instance.exited.then(async ({ code, signal, output }) => {
      if (options.stopping()) return;
      const now = Date.now();
      crashes.push(now);
      while ((crashes[0] ?? now) < now - CRASH_WINDOW_MS) crashes.shift();
      const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
      if (crashes.length >= MAX_CRASHES_IN_WINDOW) {
        options.giveUp(
          `DynamoDB Local ${how}, ${crashes.length} times within a minute; stopping the service. ` +
            `Check java and ${options.dataDir}, then npm start again. Its last output:\n${output}`,
        );
        return;
      }
      console.error(`DynamoDB Local ${how}; restarting it on port ${instance.port} with the same data.`);
      try {
        const next = await options.restart();
        console.error(`DynamoDB Local is back on port ${next.port}.`);
        watch(next);
      } catch (error) {
        options.giveUp(`DynamoDB Local could not be restarted: ${(error as Error).message}`);
      }
    });
  };
  watch(first);
}

/** A table that cannot be read or created on local data means the database file is damaged. */
function unreadableDatabase(error: unknown, dynamoDir: string): Error {
  const name = (error as { name?: string }).name ?? '';
  if (name !== 'InternalFailure' && name !== 'InternalServerError') return error as Error;
  return new StartupError(
    `DynamoDB Local cannot read its database in ${dynamoDir} (${name}); the file may be damaged. ` +
      `Move ${resolve(dynamoDir, 'shared-local-instance.db')} away (or restore a backup) and start again.`,
  );
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

await main();
