/**
 * Modelled AWS cost per million calls of the main endpoints, from what each call is measured to use, in
 * process on DynamoDB Local, warm (cold starts left out):
 *
 * - DynamoDB: the capacity units each call consumes as AWS bills them, from the units DynamoDB Local reports
 *   (ReturnConsumedCapacity TOTAL added to every call of the service's client) corrected where DynamoDB
 *   Local departs from AWS (reads that find nothing, transactions: bench/support/capacity.ts), priced on
 *   demand as read and write request units.
 * - Lambda: the handler's Node CPU time (process.cpuUsage around the call; this process is the Lambda's
 *   only work, DynamoDB Local runs apart) and its DynamoDB round trips on the critical path (waves of
 *   calls in flight), turned into a duration per memory size by the model below; requests and GB-seconds.
 * - API Gateway (HTTP API) per request; SQS per message sent (send, receive and delete: 3 requests);
 *   CloudWatch Logs ingestion of the service's own log lines (measured, at INFO as deployed) and Lambda's
 *   START/END/REPORT lines; data transfer out of the response body.
 *
 * Duration model: below 1,769 MB a function gets that share of one vCPU, so CPU-bound time (the least of
 * the calls measured) scales as 1769 / memory (this machine's core is taken as one Lambda vCPU); waits do
 * not scale: each DynamoDB round trip on the critical path is DYNAMODB_RTT_MS and each queue send
 * SQS_SEND_MS (typical in-region latencies, not measured here; DynamoDB Local on a shared machine is slower
 * and noisier, so its measured time is printed only for reference). Billed duration: rounded up to the
 * millisecond.
 *
 * Memory choice per function: the cheapest of the candidates whose modelled duration stays within
 * max(1.5 × its duration at 1,769 MB, that + 10 ms) for every endpoint of the function measured here.
 * serverless.yml's sizes are printed beside it; this bench changes nothing. Asserts nothing.
 */
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyResultV2, SQSEvent } from 'aws-lambda';
import { parse } from 'yaml';
import { benchTable } from '#bench/support/local-table';
import { type Spread, showSpread, spread } from '#bench/support/spread';
import { ensureTable } from '#infra/local/table';
import { cloudFormationTags } from '#infra/local/yaml-tags';

/**
 * Prices, us-east-1, on demand, as the AWS pricing pages state them (aws.amazon.com/dynamodb/pricing,
 * /lambda/pricing, /api-gateway/pricing, /sqs/pricing, /eventbridge/pricing, /cloudwatch/pricing),
 * cross-checked in November 2026 against published summaries of those pages dated 2025–2026; DynamoDB's are
 * those after the November 2024 on-demand reduction. Confirm them on the pages before relying on them. The
 * deployment's default region (serverless.yml) is eu-west-1, where DynamoDB costs a little more and Lambda
 * the same. Free tiers are left out.
 */
const PRICES = {
  /** DynamoDB on-demand: $0.125 per million read request units, $0.625 per million write request units. */
  readUnit: 0.125 / 1e6,
  writeUnit: 0.625 / 1e6,
  /**
   * DynamoDB provisioned capacity, for comparison only (the table is on demand): $0.00065 per write
   * capacity unit-hour, $0.00013 per read capacity unit-hour (one unit: a write, or two eventually
   * consistent reads, a second).
   */
  writeUnitHour: 0.00065,
  readUnitHour: 0.00013,
  /** Lambda: $0.20 per million requests; per GB-second $0.0000133334 on arm64, $0.0000166667 on x86_64. */
  lambdaRequest: 0.2 / 1e6,
  gbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
  /** API Gateway HTTP API: $1.00 per million requests (the first 300 million a month; 512 KB a request). */
  httpApiRequest: 1.0 / 1e6,
  /** SQS standard: $0.40 per million requests (64 KB each). */
  sqsRequest: 0.4 / 1e6,
  /** EventBridge Scheduler: $1.00 per million invocations (none of the endpoints below schedules). */
  schedulerInvocation: 1.0 / 1e6,
  /** CloudWatch Logs: $0.50 per GB ingested (standard class). */
  logGb: 0.5,
  /** Data transfer out to the internet: $0.09 per GB (the first 10 TB a month, after the first 100 GB). */
  transferGb: 0.09,
};

const DYNAMODB_RTT_MS = 5;
const SQS_SEND_MS = 10;
/** Lambda's START, END and REPORT lines of one invocation, in bytes. */
const PLATFORM_LOG_BYTES = 350;
/** SQS requests per message: its send, the consumer's receive and its delete. */
const SQS_REQUESTS_PER_MESSAGE = 3;
const FULL_VCPU_MB = 1769;
const MEMORY_CANDIDATES = [128, 256, 512, 1024] as const;
const TARGET_PER_MILLION_GET = 1.8;
/** Provisioned capacity is paid whether used or not: auto scaling's default target keeps it 70% used. */
const PROVISIONED_UTILISATION = 0.7;
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const GB = 1024 ** 3;

const dynamo = await benchTable('bench-cost');
// The service's modules read the configuration once: imported only now that benchTable has set it.
const { liftRateLimits } = await import('#bench/support/lifted-limits');
liftRateLimits();

const { dynamo: client } = await import('#lib/db/client');
const { logger } = await import('#lib/logger');
const { trackCapacity } = await import('#bench/support/capacity');

// The shadow table on which transactions' actions are replayed one by one (bench/support/capacity.ts).
const SHADOW_TABLE = 'bench-cost-shadow';
const shadowClient = new DynamoDBClient({
  region: 'us-east-1',
  endpoint: dynamo.endpoint,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
await ensureTable(shadowClient, SHADOW_TABLE);
const capacity = trackCapacity(client, shadowClient, SHADOW_TABLE);

// What one call uses beside its capacity: queue sends and log bytes, counted while `counting`.
const use = { sends: 0, logBytes: 0 };
let counting = false;
logger.addSink((line) => {
  if (counting) use.logBytes += Buffer.byteLength(line) + 1;
  // A warning or an error is a broken measurement: shown, since the console is silent.
  if (line.includes('"level":"ERROR"') || line.includes('"level":"WARN"')) console.error(line);
}, 'INFO');

type Queue = import('#lib/kernel/ports').MessageQueue;
const stageMessages: unknown[] = [];
const queue: Queue = {
  async send(name, body) {
    if (counting) use.sends += 1;
    if (name === 'pipeline-stage') stageMessages.push(body);
  },
};

const { newUser, call } = await import('#tests/support/identity');
const { httpEvent, context, loadEvent } = await import('#tests/support/events');
const { tasksHandler } = await import('#functions/http/tasks');
const { handler: auth } = await import('#functions/http/auth');
const { serviceHandler } = await import('#functions/http/service');
const { handler: tokens } = await import('#functions/http/tokens');
const { agentPipelinesHandler } = await import('#functions/http/agent-pipelines');
const { taskQueueHandler } = await import('#functions/http/task-queue');
const { dashboardHandler } = await import('#functions/http/dashboard');
const { handler: apiKeys } = await import('#functions/http/api-keys');
const { pipelineStageHandler } = await import('#functions/queue/pipeline-stage');
const { localRunner } = await import('#lib/adapters/local/local-runner');
const { createTask } = await import('#lib/tasks/task-create');
const { benchOwner, grantTokens } = await import('#bench/support/seeding');

// The first user of a table is the instance admin; the measured caller is an ordinary owner.
await newUser('admin');
const { owner, ctx } = await benchOwner();
for (let index = 0; index < 60; index += 1) {
  await createTask(ctx, {
    title: `Benchmark task ${index}`,
    description: 'A task of ordinary size: a title, a sentence of description, an assignee and a priority.',
    assignee: 'agent-1',
    priority: 'P1',
  });
}
const taskId = 1;
const keyCreated = await call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
  token: owner.token,
  body: { name: 'bench', scopes: ['read', 'write'] },
});
const apiKey = keyCreated.body.data.key as string;
await grantTokens(owner.orgId, 100_000_000);

const tasks = tasksHandler({ ports: { queue } });
const pipelines = agentPipelinesHandler({ ports: { queue } });
const stage = pipelineStageHandler({ ports: { queue, runner: localRunner({ delayMs: 0 }) } });
const service = serviceHandler();
const taskQueue = taskQueueHandler();
const dashboard = dashboardHandler();

const pipeline = await call(pipelines, 'POST', '/agent-pipelines', {
  token: owner.token,
  body: {
    name: 'cost model',
    stages: [{ name: 'only', agent: 'qa-tester', depends_on: [], config: { prompt: 'Check', max_tokens: 100 } }],
  },
});
if (pipeline.status !== 201) throw new Error(`pipeline failed: ${JSON.stringify(pipeline.body)}`);
const pipelineId = pipeline.body.data.id as number;
for (let index = 0; index < RUNS + 10; index += 1) {
  const submitted = await call(taskQueue, 'POST', '/task-queue/submit', {
    token: owner.token,
    body: { task_type: 'bench', payload: { index } },
  });
  if (submitted.status !== 201) throw new Error(`submit failed: ${JSON.stringify(submitted.body)}`);
}

type Http = (event: ReturnType<typeof httpEvent>, ctx: ReturnType<typeof context>) => Promise<unknown>;
interface Answer {
  status: number;
  bytes: number;
}

/** One HTTP call straight into the handler, as API Gateway would make it. */
async function http(
  handler: Http,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; query?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const event = httpEvent(method, `/api${path}`, {
    headers,
    ...(options.query ? { query: options.query } : {}),
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const result = (await handler(event, context())) as Exclude<APIGatewayProxyResultV2, string>;
  return { status: result.statusCode ?? 200, bytes: Buffer.byteLength(result.body ?? '') };
}

/** The stage message the last execute sent, as the queue's consumer receives it. */
function stageEvent(): SQSEvent {
  const event = loadEvent<SQSEvent>('sqs/pipeline-stage');
  const record = event.Records[0] as SQSEvent['Records'][number];
  record.body = JSON.stringify(stageMessages.shift());
  record.attributes.ApproximateReceiveCount = '1';
  return { Records: [record] };
}

interface Endpoint {
  label: string;
  /** serverless.yml's function. */
  fn: string;
  /** Reached through API Gateway (else a queue's consumer). */
  http: boolean;
  /** Makes the call measured once; what it answered. */
  invoke: () => Promise<Answer>;
  /** Unmeasured work before each call (a stage needs an execution) and after it. */
  before?: () => Promise<void>;
  after?: () => Promise<void>;
  /** Expected statuses. */
  ok: number[];
}

let titles = 0;
const nextTitle = () => {
  titles += 1;
  return `Cost model task ${titles}`;
};
const execute = () =>
  http(pipelines, 'POST', `/agent-pipelines/${pipelineId}/execute`, { token: owner.token, body: { inputs: {} } });
const runStage = async (): Promise<Answer> => {
  const result = await stage(stageEvent(), context('pipelineStage'));
  return { status: result.batchItemFailures.length === 0 ? 200 : 500, bytes: 0 };
};
const endpoints: Endpoint[] = [
  {
    label: 'GET /tasks/{id} (JWT)',
    fn: 'tasks',
    http: true,
    ok: [200],
    invoke: () => http(tasks, 'GET', `/tasks/${taskId}`, { token: owner.token }),
  },
  {
    label: 'GET /tasks/{id} (API key)',
    fn: 'tasks',
    http: true,
    ok: [200],
    invoke: () => http(tasks, 'GET', `/tasks/${taskId}`, { token: apiKey }),
  },
  {
    label: 'GET /tasks?limit=50',
    fn: 'tasks',
    http: true,
    ok: [200],
    invoke: () => http(tasks, 'GET', '/tasks', { token: owner.token, query: { limit: '50' } }),
  },
  {
    label: 'POST /tasks',
    fn: 'tasks',
    http: true,
    ok: [201],
    invoke: () => http(tasks, 'POST', '/tasks', { token: owner.token, body: { title: nextTitle() } }),
  },
  {
    label: 'GET /auth/me (JWT)',
    fn: 'auth',
    http: true,
    ok: [200],
    invoke: () => http(auth, 'GET', '/auth/me', { token: owner.token }),
  },
  { label: 'GET /health', fn: 'service', http: true, ok: [200], invoke: () => http(service, 'GET', '/health') },
  {
    label: 'POST /tokens/consume',
    fn: 'tokens',
    http: true,
    ok: [200],
    invoke: () => http(tokens, 'POST', '/tokens/consume', { token: owner.token, body: { amount: 1, action: 'bench' } }),
  },
  {
    label: 'POST /agent-pipelines/{id}/execute',
    fn: 'agentPipelines',
    http: true,
    ok: [202],
    invoke: execute,
    // The execution's one stage runs unmeasured, so that executions do not pile up.
    after: async () => void (await runStage()),
  },
  {
    label: 'pipeline stage (queue consumer)',
    fn: 'pipelineStage',
    http: false,
    ok: [200],
    before: async () => void (await execute()),
    invoke: runStage,
  },
  {
    label: 'POST /task-queue/claim',
    fn: 'taskQueue',
    http: true,
    ok: [200],
    invoke: () =>
      http(taskQueue, 'POST', '/task-queue/claim', { token: owner.token, body: { worker_id: 'bench-worker' } }),
  },
  {
    label: 'GET /dashboard/stats',
    fn: 'dashboard',
    http: true,
    ok: [200],
    invoke: () => http(dashboard, 'GET', '/dashboard/stats', { token: owner.token }),
  },
  {
    label: 'GET /dashboard (no credential)',
    fn: 'dashboard',
    http: true,
    ok: [200],
    invoke: () => http(dashboard, 'GET', '/dashboard'),
  },
];

interface Measured {
  endpoint: Endpoint;
  wallMs: Spread;
  cpuMs: Spread;
  readUnits: Spread;
  writeUnits: Spread;
  calls: Spread;
  roundTrips: Spread;
  sends: Spread;
  logBytes: Spread;
  responseBytes: Spread;
}

interface Sample {
  readUnits: number;
  writeUnits: number;
  calls: number;
  roundTrips: number;
  sends: number;
  logBytes: number;
  wallMs: number;
  cpuMs: number;
  responseBytes: number;
}

async function measure(endpoint: Endpoint): Promise<Measured> {
  const samples: Sample[] = [];
  for (let run = 0; run < RUNS + 5; run += 1) {
    await endpoint.before?.();
    Object.assign(use, { sends: 0, logBytes: 0 });
    capacity.reset();
    counting = true;
    capacity.counting = true;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const answer = await endpoint.invoke();
    const wallMs = performance.now() - started - capacity.excludedMs;
    const spent = process.cpuUsage(cpu);
    counting = false;
    capacity.counting = false;
    if (!endpoint.ok.includes(answer.status)) throw new Error(`${endpoint.label} answered ${answer.status}`);
    await endpoint.after?.();
    // The first five warm the code paths up.
    if (run < 5) continue;
    samples.push({
      readUnits: capacity.readUnits,
      writeUnits: capacity.writeUnits,
      calls: capacity.calls,
      roundTrips: capacity.roundTrips,
      ...use,
      wallMs,
      cpuMs: (spent.user + spent.system - capacity.excludedCpuMicros) / 1000,
      responseBytes: answer.bytes,
    });
  }
  const of = (pick: (sample: Sample) => number) => spread(samples.map(pick));
  return {
    endpoint,
    wallMs: of((sample) => sample.wallMs),
    cpuMs: of((sample) => sample.cpuMs),
    readUnits: of((sample) => sample.readUnits),
    writeUnits: of((sample) => sample.writeUnits),
    calls: of((sample) => sample.calls),
    roundTrips: of((sample) => sample.roundTrips),
    sends: of((sample) => sample.sends),
    logBytes: of((sample) => sample.logBytes),
    responseBytes: of((sample) => sample.responseBytes),
  };
}

/**
 * Modelled duration in ms at `memoryMb`, from the least CPU time of the calls and the waits. The least, not
 * the median: on this shared machine other processes' load inflates CPU time (context switches, cold
 * caches) in a way a Lambda's own share of a vCPU is not; the median is printed beside it.
 */
const durationAt = (figures: Measured, memoryMb: number) =>
  figures.cpuMs.min * Math.max(1, FULL_VCPU_MB / memoryMb) +
  figures.roundTrips.median * DYNAMODB_RTT_MS +
  figures.sends.median * SQS_SEND_MS;

const withinBound = (figures: Measured, memoryMb: number) => {
  const full = durationAt(figures, FULL_VCPU_MB);
  return durationAt(figures, memoryMb) <= Math.max(1.5 * full, full + 10);
};

/** Dollars per million calls at `memoryMb`, by part. */
function costAt(figures: Measured, memoryMb: number, arch: 'arm64' | 'x86_64') {
  const billedMs = Math.ceil(durationAt(figures, memoryMb));
  const parts = {
    gateway: figures.endpoint.http ? PRICES.httpApiRequest : 0,
    lambda: PRICES.lambdaRequest + (memoryMb / 1024) * (billedMs / 1000) * PRICES.gbSecond[arch],
    dynamodb: figures.readUnits.median * PRICES.readUnit + figures.writeUnits.median * PRICES.writeUnit,
    sqs: figures.sends.median * SQS_REQUESTS_PER_MESSAGE * PRICES.sqsRequest,
    logs: ((figures.logBytes.median + PLATFORM_LOG_BYTES) / GB) * PRICES.logGb,
    transfer: (figures.responseBytes.median / GB) * PRICES.transferGb,
  };
  const perCall = Object.values(parts).reduce((sum, value) => sum + value, 0);
  return { billedMs, parts: mapValues(parts, (value) => value * 1e6), total: perCall * 1e6 };
}

const mapValues = <T extends Record<string, number>>(record: T, map: (value: number) => number) =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)])) as T;

const measured: Measured[] = [];
for (const endpoint of endpoints) measured.push(await measure(endpoint));

const serverless = parse(readFileSync('serverless.yml', 'utf8'), { customTags: cloudFormationTags }) as {
  provider: { memorySize?: number; architecture?: string };
  functions: Record<string, { memorySize?: number }>;
};
const arch = serverless.provider.architecture === 'arm64' ? 'arm64' : 'x86_64';
const memoryOf = (fn: string) => serverless.functions[fn]?.memorySize ?? serverless.provider.memorySize ?? 1024;

console.log(
  `Prices (us-east-1, on demand): DynamoDB $${PRICES.readUnit * 1e6}/M read units, $${PRICES.writeUnit * 1e6}/M ` +
    `write units; Lambda $${PRICES.lambdaRequest * 1e6}/M requests, $${PRICES.gbSecond[arch]}/GB-s (${arch}, ` +
    `serverless.yml); HTTP API $${PRICES.httpApiRequest * 1e6}/M; SQS $${PRICES.sqsRequest * 1e6}/M requests ` +
    `(${SQS_REQUESTS_PER_MESSAGE} a message); logs $${PRICES.logGb}/GB (+${PLATFORM_LOG_BYTES} B a call); ` +
    `transfer $${PRICES.transferGb}/GB.`,
);
console.log(
  `Duration model: least CPU time × max(1, ${FULL_VCPU_MB} MB / memory) + ` +
    `${DYNAMODB_RTT_MS} ms a DynamoDB round trip + ` +
    `${SQS_SEND_MS} ms a queue send. ${RUNS} warm calls an endpoint, in process; min / median / max.\n`,
);

console.log(
  `${'endpoint'.padEnd(34)}${'read units'.padStart(16)}${'write units'.padStart(19)}${'calls'.padStart(7)}` +
    `${'trips'.padStart(6)}${'sends'.padStart(6)}${'CPU ms'.padStart(22)}${'local ms'.padStart(22)}` +
    `${'log B'.padStart(8)}${'body B'.padStart(8)}`,
);
for (const figures of measured) {
  console.log(
    `${figures.endpoint.label.padEnd(34)}${showSpread(figures.readUnits, 1).padStart(16)}` +
      `${showSpread(figures.writeUnits, 1).padStart(19)}${String(figures.calls.median).padStart(7)}` +
      `${String(figures.roundTrips.median).padStart(6)}${String(figures.sends.median).padStart(6)}` +
      `${showSpread(figures.cpuMs, 2).padStart(22)}${showSpread(figures.wallMs, 1).padStart(22)}` +
      `${String(figures.logBytes.median).padStart(8)}${String(figures.responseBytes.median).padStart(8)}`,
  );
}

console.log(
  `\n$ per million calls by memory size (${arch}; modelled billed duration in ms); * within the latency bound`,
);
console.log(
  `${'endpoint'.padEnd(34)}${MEMORY_CANDIDATES.map((mb) => `${mb} MB`.padStart(16)).join('')}` +
    `${'  parts at the recommended size: gateway + lambda + dynamodb + sqs + logs + transfer'}`,
);
const recommended = new Map<string, number>();
for (const fn of new Set(endpoints.map((endpoint) => endpoint.fn))) {
  const ofFn = measured.filter((figures) => figures.endpoint.fn === fn);
  const total = (mb: number) => ofFn.reduce((sum, figures) => sum + costAt(figures, mb, arch).total, 0);
  const fitting = MEMORY_CANDIDATES.filter((mb) => ofFn.every((figures) => withinBound(figures, mb)));
  const choice = [...fitting].sort((a, b) => total(a) - total(b))[0] ?? MEMORY_CANDIDATES[MEMORY_CANDIDATES.length - 1];
  recommended.set(fn, choice as number);
}
for (const figures of measured) {
  const choice = recommended.get(figures.endpoint.fn) as number;
  const cells = MEMORY_CANDIDATES.map((mb) => {
    const cost = costAt(figures, mb, arch);
    const mark = withinBound(figures, mb) ? '*' : ' ';
    return `${cost.total.toFixed(3)} (${cost.billedMs})${mark}`.padStart(16);
  });
  const parts = costAt(figures, choice, arch).parts;
  console.log(
    `${figures.endpoint.label.padEnd(34)}${cells.join('')}  ` +
      Object.values(parts)
        .map((value) => value.toFixed(3))
        .join(' + '),
  );
}

console.log('\nMemory per function: the cheapest size within the latency bound for all its endpoints measured here');
for (const [fn, choice] of recommended) {
  const labels = measured.filter((figures) => figures.endpoint.fn === fn).map((figures) => figures.endpoint.label);
  console.log(
    `  ${fn.padEnd(16)} serverless.yml ${String(memoryOf(fn)).padStart(5)} MB → ${choice} MB  (${labels.join(', ')})`,
  );
}

console.log(`\nTarget: ≤ $${TARGET_PER_MILLION_GET.toFixed(2)} per million authenticated GETs`);
for (const figures of measured.filter((figures) => figures.endpoint.label.startsWith('GET /tasks/{id}'))) {
  const fn = figures.endpoint.fn;
  const atChoice = costAt(figures, recommended.get(fn) as number, arch);
  const atCurrent = costAt(figures, memoryOf(fn), arch);
  const x86 = costAt(figures, recommended.get(fn) as number, 'x86_64');
  const fixed = (PRICES.httpApiRequest + PRICES.lambdaRequest) * 1e6;
  const verdict = atChoice.total <= TARGET_PER_MILLION_GET ? 'within the target' : 'above the target';
  console.log(
    `  ${figures.endpoint.label.padEnd(28)} $${atChoice.total.toFixed(3)} at ${recommended.get(fn)} MB, ${verdict} ` +
      `($${atCurrent.total.toFixed(3)} at serverless.yml's ${memoryOf(fn)} MB, $${x86.total.toFixed(3)} on x86_64); ` +
      `$${(atChoice.total - atChoice.parts.logs - atChoice.parts.transfer).toFixed(3)} without logs and transfer; ` +
      `of which fixed per request (HTTP API + Lambda request) $${fixed.toFixed(2)}, DynamoDB ` +
      `$${atChoice.parts.dynamodb.toFixed(3)} (${figures.readUnits.median} read + ` +
      `${figures.writeUnits.median} write units)`,
  );
}
console.log(
  `  on provisioned capacity ${PROVISIONED_UTILISATION * 100}% used (steady traffic only; the table is on demand):`,
);
for (const figures of measured.filter((figures) => figures.endpoint.label.startsWith('GET /tasks/{id}'))) {
  const atChoice = costAt(figures, recommended.get(figures.endpoint.fn) as number, arch);
  const perUnitSecond = (unitHour: number) => unitHour / 3600 / PROVISIONED_UTILISATION;
  // Read units as measured count eventually consistent reads as half a unit: a provisioned unit serves two.
  const provisioned =
    figures.readUnits.median * perUnitSecond(PRICES.readUnitHour) +
    figures.writeUnits.median * perUnitSecond(PRICES.writeUnitHour);
  const dynamodb = provisioned * 1e6;
  const total = atChoice.total - atChoice.parts.dynamodb + dynamodb;
  const bare = total - atChoice.parts.logs - atChoice.parts.transfer;
  console.log(
    `    ${figures.endpoint.label.padEnd(26)} $${total.toFixed(3)} (DynamoDB $${dynamodb.toFixed(3)}); ` +
      `$${bare.toFixed(3)} without logs and transfer`,
  );
}
console.log(
  `  one write unit per request (the rate limit's counter) costs $${(PRICES.writeUnit * 1e6).toFixed(3)} a million: ` +
    `with the fixed $${((PRICES.httpApiRequest + PRICES.lambdaRequest) * 1e6).toFixed(2)}, ` +
    `$${((PRICES.httpApiRequest + PRICES.lambdaRequest + PRICES.writeUnit) * 1e6).toFixed(3)} before any read.`,
);

await dynamo.stop();
process.exit(0);
