/**
 * Pipeline executions in process on DynamoDB Local, with a runner that takes a fixed time per stage:
 * a 30-stage and a 200-stage DAG (layers of stages, each depending on two of the layer before). Prints,
 * per DAG, the time from execute to the last stage's end, the critical path (layers × run time), their
 * ratio, queue messages per stage and DynamoDB writes per stage (items written, transactions counted by
 * their items). Asserts nothing.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-pipelines');

const { dynamo: client } = await import('#lib/db/client');
let writes = 0;
let writeCalls = 0;
let counting = false;
client.middlewareStack.add(
  (next, context) => async (args) => {
    if (counting) {
      const name = (context.commandName as string).replace('Command', '');
      const input = args.input as { TransactItems?: unknown[]; RequestItems?: Record<string, unknown[]> };
      if (name === 'TransactWriteItems') writes += input.TransactItems?.length ?? 0;
      else if (name === 'BatchWriteItem') writes += Object.values(input.RequestItems ?? {}).flat().length;
      else if (['PutItem', 'UpdateItem', 'DeleteItem'].includes(name)) writes += 1;
      if (['TransactWriteItems', 'BatchWriteItem', 'PutItem', 'UpdateItem', 'DeleteItem'].includes(name)) {
        writeCalls += 1;
      }
    }
    return next(args);
  },
  { step: 'initialize', name: 'countWrites' },
);

const { newUser, call } = await import('#tests/support/identity');
const { agentPipelinesHandler } = await import('#functions/http/agent-pipelines');
const { pipelineStageHandler } = await import('#functions/queue/pipeline-stage');
const { memoryQueue } = await import('#lib/adapters/local/memory-queue');
const { ledgerWrites } = await import('#lib/tokens/ledger');
const { transact } = await import('#lib/db/transactions');
type Consumers = import('#lib/adapters/local/memory-queue').MemoryQueueOptions['consumers'];
type Runner = import('#lib/kernel/ports').AgentRunner;
type Queue = import('#lib/kernel/ports').MessageQueue;

const RUN_MS = 100;
const runner: Runner = {
  kind: 'local',
  async run() {
    await new Promise((resolve) => setTimeout(resolve, RUN_MS));
    return { output: { summary: 'done' }, usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 }, model: 'm' };
  },
};

let messages = 0;
const consumers: Consumers = {};
const memory = memoryQueue({ consumers, batchSize: 10 });
const queue: Queue = {
  async send(name, body, options) {
    if (counting && name === 'pipeline-stage') messages += 1;
    await memory.send(name, body, options);
  },
};
consumers['pipeline-stage'] = pipelineStageHandler({ ports: { queue, runner } });
const api = agentPipelinesHandler({ ports: { queue } });

const owner = await newUser('bench');
await transact(
  ledgerWrites({
    orgId: owner.orgId,
    type: 'admin_grant',
    amount: 10_000_000,
    action: 'bench',
    actor: 'system',
    now: new Date(),
  }).writes,
);

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

async function bench(label: string, layers: number, width: number): Promise<void> {
  const stages = layeredDag(layers, width);
  const token = owner.token;
  const created = await call(api, 'POST', '/agent-pipelines', { token, body: { name: label, stages } });
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const id = created.body.data.id;
  writes = 0;
  writeCalls = 0;
  messages = 0;
  counting = true;
  const started = performance.now();
  const executed = await call(api, 'POST', `/agent-pipelines/${id}/execute`, { token, body: { inputs: {} } });
  if (executed.status !== 202) throw new Error(`execute failed: ${JSON.stringify(executed.body)}`);
  await memory.drain();
  const total = performance.now() - started;
  counting = false;
  const read = await call(api, 'GET', `/agent-pipelines/${id}/executions/${executed.body.data.id}`, { token });
  const critical = layers * RUN_MS;
  const n = stages.length;
  console.log(
    `${label.padEnd(34)} ${read.body.data.status}: total ${total.toFixed(0)} ms, critical path ${critical} ms, ` +
      `ratio ${(total / critical).toFixed(2)}; per stage: ${(messages / n).toFixed(2)} queue messages, ` +
      `${(writes / n).toFixed(1)} DynamoDB items written in ${(writeCalls / n).toFixed(1)} write calls`,
  );
}

console.log(`runner: ${RUN_MS} ms a stage`);
await bench('30 stages (6 layers of 5)', 6, 5);
await bench('200 stages (20 layers of 10)', 20, 10);

memory.close();
await dynamo.stop();
process.exit(0);
