/**
 * Pipeline executions in process on DynamoDB Local, as `npm start` runs them: the local runner taking a
 * fixed time per stage (LOCAL_RUN_DELAY_MS), the durable local queue (every message also kept in the
 * table), the real stage consumer. DAGs of layers, each stage depending on two of the layer before: 30
 * stages (6 layers of 5) and 200 (20 layers of 10), each with a 1 s and a 100 ms stage.
 *
 * Each shape runs BENCH_ROUNDS times (3), the shapes in turn. Prints per shape, as min / median / max over
 * its runs: the time from execute to the execution's end, the critical path (layers × stage time), their
 * ratio, the engine's time per layer beyond the stage's own (what the ratio is made of), queue messages per
 * stage, and DynamoDB writes per stage (items written, a transaction counted by its items, and write
 * calls; the queue's own copies of its messages included), beside the target (total ≤ 1.15× the critical
 * path for 30 stages, one queue message per stage). Asserts nothing.
 */

import { benchTable } from '#bench/support/local-table';
import { showSpread, spread } from '#bench/support/spread';

const dynamo = await benchTable('bench-pipelines');

const { dynamo: client } = await import('#lib/db/client');
let writes = 0;
let writeCalls = 0;
let counting = false;
const WRITE_COMMANDS = new Set(['TransactWriteItems', 'BatchWriteItem', 'PutItem', 'UpdateItem', 'DeleteItem']);
client.middlewareStack.add(
  (next, context) => async (args) => {
    const name = (context.commandName as string).replace('Command', '');
    if (counting && WRITE_COMMANDS.has(name)) {
      const input = args.input as { TransactItems?: unknown[]; RequestItems?: Record<string, unknown[]> };
      if (name === 'TransactWriteItems') writes += input.TransactItems?.length ?? 0;
      else if (name === 'BatchWriteItem') writes += Object.values(input.RequestItems ?? {}).flat().length;
      else writes += 1;
      writeCalls += 1;
    }
    return next(args);
  },
  { step: 'initialize', name: 'countWrites' },
);

const { newUser, call } = await import('#tests/support/identity');
const { agentPipelinesHandler } = await import('#functions/http/agent-pipelines');
const { tenantConfigHandler } = await import('#functions/http/tenant-config');
const { pipelineStageHandler } = await import('#functions/queue/pipeline-stage');
const { durableQueue } = await import('#lib/adapters/local/durable-queue');
const { localRunner } = await import('#lib/adapters/local/local-runner');
const { grantTokens } = await import('#bench/support/seeding');
type Queue = import('#lib/kernel/ports').MessageQueue;

const durable = durableQueue({ partition: 'BENCHQUEUE' });
let messages = 0;
const queue: Queue = {
  async send(name, body, options) {
    if (counting && name === 'pipeline-stage') messages += 1;
    await durable.send(name, body, options);
  },
};
// The execution's end is seen as its pipeline_completed or pipeline_failed event reaching the queue
// (never sent on): exact, and without reads that would weigh on what is measured.
let ended: (() => void) | undefined;
durable.connect('webhook-delivery', async () => {
  ended?.();
  return { batchItemFailures: [] };
});

const api = agentPipelinesHandler({ ports: { queue } });
const owner = await newUser('bench');
await grantTokens(owner.orgId, 100_000_000);

const hook = 'https://hooks.example.com/done';
const webhooks = { pipeline_completed: hook, pipeline_failed: hook };
const configured = await call(tenantConfigHandler({ ports: { queue } }), 'PATCH', '/tenant-config', {
  token: owner.token,
  body: { webhooks },
});
if (configured.status !== 200) throw new Error(`tenant config failed: ${JSON.stringify(configured.body)}`);

/** A deterministic generator, so that every run benchmarks the same DAGs. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function layeredDag(layers: number, width: number) {
  const next = random(layers * 1000 + width);
  const stages: Array<{ name: string; agent: string; depends_on: string[]; config: Record<string, unknown> }> = [];
  for (let layer = 0; layer < layers; layer += 1) {
    for (let at = 0; at < width; at += 1) {
      const before = Array.from({ length: width }, (_, index) => `s${layer - 1}-${index}`);
      const parents =
        layer === 0 ? [] : [...new Set([before[Math.floor(next() * width)], before[Math.floor(next() * width)]])];
      stages.push({
        name: `s${layer}-${at}`,
        agent: 'qa-tester',
        depends_on: parents as string[],
        config: { prompt: `Stage ${layer}.${at}`, max_tokens: 100 },
      });
    }
  }
  return stages;
}

interface Figures {
  status: string;
  total: number;
  critical: number;
  /** The engine's time per layer beyond the stage's own. */
  engine: number;
  messages: number;
  writes: number;
  writeCalls: number;
}

let pipelines = 0;

async function bench(layers: number, width: number, stageMs: number): Promise<Figures> {
  pipelines += 1;
  const stages = layeredDag(layers, width);
  const token = owner.token;
  const created = await call(api, 'POST', '/agent-pipelines', {
    token,
    body: { name: `${layers}x${width} ${stageMs} ms #${pipelines}`, stages },
  });
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const id = created.body.data.id;
  const done = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const runner = localRunner({ delayMs: stageMs });
  durable.connect('pipeline-stage', pipelineStageHandler({ ports: { queue, runner } }));
  writes = 0;
  writeCalls = 0;
  messages = 0;
  counting = true;
  const started = performance.now();
  const executed = await call(api, 'POST', `/agent-pipelines/${id}/execute`, { token, body: { inputs: {} } });
  if (executed.status !== 202) throw new Error(`execute failed: ${JSON.stringify(executed.body)}`);
  await done;
  const total = performance.now() - started;
  await durable.drain();
  counting = false;
  const read = await call(api, 'GET', `/agent-pipelines/${id}/executions/${executed.body.data.id}`, { token });
  const critical = layers * stageMs;
  const n = stages.length;
  return {
    status: read.body.data.status,
    total,
    critical,
    engine: (total - critical) / layers,
    messages: messages / n,
    writes: writes / n,
    writeCalls: writeCalls / n,
  };
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const shapes = [
  { layers: 6, width: 5, stageMs: 1000 },
  { layers: 20, width: 10, stageMs: 1000 },
  { layers: 6, width: 5, stageMs: 100 },
  { layers: 20, width: 10, stageMs: 100 },
];

// A first small run warms the code paths and DynamoDB Local up; its figures are not printed.
await bench(3, 3, 10);
// Round after round, every shape in turn, so that the machine's load falls on all of them alike.
const runs = shapes.map(() => [] as Figures[]);
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [index, shape] of shapes.entries()) {
    runs[index]?.push(await bench(shape.layers, shape.width, shape.stageMs));
  }
}

console.log(
  `Target: total ≤ 1.15× the critical path for 30 stages; one queue message per stage. ` +
    `min / median / max over ${ROUNDS} runs:`,
);
for (const [index, shape] of shapes.entries()) {
  const figures = runs[index] ?? [];
  const of = (pick: (figure: Figures) => number, digits = 0) => showSpread(spread(figures.map(pick)), digits);
  const statuses = [...new Set(figures.map((figure) => figure.status))].join(', ');
  const n = shape.layers * shape.width;
  const label = `${n} stages (${shape.layers} layers of ${shape.width}), ${shape.stageMs} ms a stage`;
  console.log(
    `${label} (${statuses}): total ${of((figure) => figure.total)} ms, critical path ` +
      `${shape.layers * shape.stageMs} ms, ratio ${of((figure) => figure.total / figure.critical, 2)}, ` +
      `engine ${of((figure) => figure.engine)} ms a layer\n    per stage: ` +
      `${of((figure) => figure.messages, 2)} queue messages, ${of((figure) => figure.writes, 1)} items written ` +
      `in ${of((figure) => figure.writeCalls, 1)} write calls`,
  );
}

durable.close();
await dynamo.stop();
process.exit(0);
