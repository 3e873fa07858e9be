/**
 * Pipeline executions in process on DynamoDB Local, as `npm start` runs them: the local runner taking a
 * fixed time per stage (LOCAL_RUN_DELAY_MS), the durable local queue (every message also kept in the
 * table), the real stage consumer. DAGs of layers, each stage depending on two of the layer before: 30
 * stages (6 layers of 5) and 200 (20 layers of 10), each with a 1 s and a 100 ms stage.
 *
 * Prints per run: the time from execute to the execution's end, the critical path (layers × stage time),
 * their ratio, the engine's time per layer beyond the stage's own (what the ratio is made of), queue
 * messages per stage, and DynamoDB writes per stage (items written, a transaction counted by its items,
 * and write calls; the queue's own copies of its messages included). Asserts nothing.
 */

import { benchTable } from '#bench/support/local-table';

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
const { ledgerWrites } = await import('#lib/tokens/ledger');
const { transact } = await import('#lib/db/transactions');
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
await transact(
  ledgerWrites({
    orgId: owner.orgId,
    type: 'admin_grant',
    amount: 100_000_000,
    action: 'bench',
    actor: 'system',
    now: new Date(),
  }).writes,
);

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

async function bench(layers: number, width: number, stageMs: number, print = true): Promise<void> {
  const stages = layeredDag(layers, width);
  const token = owner.token;
  const label = `${stages.length} stages (${layers} layers of ${width}), ${stageMs} ms a stage`;
  const created = await call(api, 'POST', '/agent-pipelines', {
    token,
    body: { name: `${layers}x${width} ${stageMs}`, stages },
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
  const status = read.body.data.status;
  const critical = layers * stageMs;
  const n = stages.length;
  if (!print) return;
  console.log(
    `${label.padEnd(44)} ${status}: total ${total.toFixed(0)} ms, critical path ${critical} ms, ` +
      `ratio ${(total / critical).toFixed(2)}, engine ${((total - critical) / layers).toFixed(0)} ms a layer; ` +
      `per stage: ${(messages / n).toFixed(2)} queue messages, ${(writes / n).toFixed(1)} items written ` +
      `in ${(writeCalls / n).toFixed(1)} write calls`,
  );
}

// A first small run warms the code paths and DynamoDB Local up; its figures are not printed.
await bench(3, 3, 10, false);
await bench(6, 5, 1000);
await bench(20, 10, 1000);
await bench(6, 5, 100);
await bench(20, 10, 100);

durable.close();
await dynamo.stop();
process.exit(0);
