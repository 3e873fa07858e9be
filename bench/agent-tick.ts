/**
 * The agent tick with the local runner, in process on DynamoDB Local: the DynamoDB calls and time of a
 * tick that runs a task and of one that finds nothing to do (median and p90 over 40 ticks each), and
 * the throughput of 8 agents ticking side by side over 400 tasks they all may take (unassigned, so
 * every claim is contested). Prints the figures; asserts nothing.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-agent-tick');

const { dynamo: client } = await import('#lib/db/client');
const calls = new Map<string, number>();
let counting = false;
client.middlewareStack.add(
  (next, context) => async (args) => {
    if (counting) {
      const name = (context.commandName as string).replace('Command', '');
      calls.set(name, (calls.get(name) ?? 0) + 1);
    }
    return next(args);
  },
  { step: 'initialize', name: 'countCalls' },
);

const { newUser } = await import('#tests/support/identity');
const { seedAgent } = await import('#tests/support/agents');
const { agentTickHandler } = await import('#functions/schedule/agent-tick');
const { localRunner } = await import('#lib/adapters/local/local-runner');
const { memoryQueue } = await import('#lib/adapters/local/memory-queue');
const { createTask } = await import('#lib/tasks/task-create');
const { wirePorts } = await import('#lib/app/ports');
const { requestContext } = await import('#lib/kernel/context');
const { grantTokens } = await import('#bench/support/seeding');

const queue = memoryQueue({ consumers: {}, holdUntilConnected: true });
const tick = agentTickHandler({ runner: localRunner(), queue });
const owner = await newUser('bench');
const orgId = owner.orgId;
await grantTokens(orgId, 10_000_000);
const ctx = requestContext({
  traceId: 'bench',
  ports: wirePorts({ queue }),
  principal: {
    method: 'jwt',
    orgId,
    capability: 'admin',
    userId: owner.id,
    isInstanceAdmin: false,
    scopes: [],
    organization: { id: orgId, name: 'bench', slug: 'bench' },
  },
});

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function measure(label: string, agentId: number, runs: number): Promise<void> {
  const times: number[] = [];
  calls.clear();
  for (let run = 0; run < runs; run += 1) {
    counting = true;
    const started = performance.now();
    await tick({ org_id: orgId, agent_id: agentId });
    times.push(performance.now() - started);
    counting = false;
  }
  times.sort((a, b) => a - b);
  const perTick = [...calls].map(([name, count]) => `${name} ${(count / runs).toFixed(1)}`).join(', ');
  const median = percentile(times, 0.5)?.toFixed(1);
  const p90 = percentile(times, 0.9)?.toFixed(1);
  console.log(`${label.padEnd(28)} median ${median} ms, p90 ${p90} ms; DynamoDB calls per tick: ${perTick}`);
}

const worker = await seedAgent(orgId, { name: 'worker' });
for (let n = 0; n < 40; n += 1) await createTask(ctx, { title: `Bench task ${n}`, assignee: 'worker' });
await measure('tick that runs a task', worker.id, 40);
await measure('tick with nothing to do', worker.id, 40);

const crowd = await Promise.all(
  Array.from({ length: 8 }, (_, n) => seedAgent(orgId, { name: `crowd-${n}`, config: { take_unassigned: true } })),
);
for (let n = 0; n < 400; n += 1) await createTask(ctx, { title: `Shared task ${n}` });
const started = performance.now();
let ran = 0;
await Promise.all(
  crowd.map(async (agent) => {
    for (;;) {
      const outcome = await tick({ org_id: orgId, agent_id: agent.id });
      if (outcome.outcome !== 'succeeded') break;
      ran += 1;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
console.log(
  `8 agents, 400 unassigned tasks: ${ran} runs in ${seconds.toFixed(1)} s (${(ran / seconds).toFixed(0)} tasks/s)`,
);

await dynamo.stop();
process.exit(0);
