import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { handler as tokens } from '#functions/http/tokens';
import { pipelineStageHandler } from '#functions/queue/pipeline-stage';
import { pipelineReconcilerHandler } from '#functions/schedule/pipeline-reconciler';
import { type MemoryQueue, type MemoryQueueOptions, memoryQueue } from '#lib/adapters/local/memory-queue';
import { table } from '#lib/db/table';
import { AgentRunError } from '#lib/errors';
import type { GroupHandler } from '#lib/http/group-handler';
import { fixedClock } from '#lib/kernel/clock';
import type { AgentRunner, AgentRunRequest, MessageQueue } from '#lib/kernel/ports';
import { type ExecutionItem, executionKeys, type StageItem } from '#lib/pipelines/execution-keys';
import type { StagePolicy } from '#lib/pipelines/stage-run';
import { call, type TestUser } from '#tests/support/identity';

/**
 * Test helpers for agent pipelines: the pipeline functions wired in one process on an in-process queue,
 * a runner that plays the agents by script, calls that create, execute and read executions as a given
 * user, and writes that put an execution's records in a state the engine may leave them in.
 */

/** One run the test runner made: its stage, the request, and when it started and ended (performance.now()). */
export interface RunRecord {
  stage: string;
  request: AgentRunRequest;
  startedAt: number;
  /** Unset while the run is held or working. */
  endedAt?: number;
}

export interface TestRunner extends AgentRunner {
  /** Every run, in the order they started. */
  runs: RunRecord[];
  /** The stages whose runs fail; a test may change it (empty it before a rerun, say). */
  failing: Set<string>;
  /** Resolves once a run of `stage` has started. */
  started(stage: string): Promise<void>;
  /** Lets the held runs go on. */
  release(): void;
}

/**
 * A runner that records each run by its stage (`input.stage`, which `stage()` sets), holds the runs of
 * the stages `held` names until `release()`, works `sleepMs`, fails the stages `failing` names (a
 * retryable error, `<stage> broke`), and otherwise answers `{ summary: '<stage> done', stage, echo:
 * <its input>, nested: { deep: '<stage>-deep' } }` using `tokens[stage]` tokens (`each`, by default 100).
 *
 * @example
 * const runner = testRunner({ failing: ['b'] });
 * // … the execution fails at b; then, for a rerun that succeeds:
 * runner.failing.clear();
 */
export function testRunner(
  options: {
    failing?: string[];
    held?: string[];
    sleepMs?: number;
    tokens?: Record<string, number>;
    each?: number;
  } = {},
): TestRunner {
  const failing = new Set(options.failing ?? []);
  const held = new Set(options.held ?? []);
  const runs: RunRecord[] = [];
  const waiting = new Map<string, Array<() => void>>();
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    kind: 'local',
    runs,
    failing,
    release,
    started: (stage) =>
      runs.some((run) => run.stage === stage)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.set(stage, [...(waiting.get(stage) ?? []), resolve])),
    async run(request) {
      const stage = String(request.input.stage);
      const run: RunRecord = { stage, request, startedAt: performance.now() };
      runs.push(run);
      for (const resolve of waiting.get(stage) ?? []) resolve();
      if (held.has(stage)) await released;
      if (options.sleepMs) await new Promise((resolve) => setTimeout(resolve, options.sleepMs));
      run.endedAt = performance.now();
      if (failing.has(stage)) throw new AgentRunError(`${stage} broke`, { retryable: true });
      return {
        output: { summary: `${stage} done`, stage, echo: request.input, nested: { deep: `${stage}-deep` } },
        usage: { input_tokens: 60, output_tokens: 40, total_tokens: options.tokens?.[stage] ?? options.each ?? 100 },
        model: 'test-model',
      };
    },
  };
}

/** The runs `runner` made of one stage. */
export const runsOf = (runner: TestRunner, name: string) => runner.runs.filter((run) => run.stage === name);

const opened: MemoryQueue[] = [];

/** Closes the in-process queue of every engine built so far; for afterEach. */
export function closeEngines(): void {
  for (const queue of opened.splice(0)) queue.close();
}

/**
 * The pipeline functions in one process: an in-process queue whose stage consumer is the real handler
 * running `runner`, with retry delays of 10 ms instead of seconds, and the functions that send to it.
 * `through` wraps the queue in what the functions and the consumer send through (one that refuses,
 * drops or doubles messages, as SQS might); `policy` overrides the consumer's. Webhook deliveries are
 * recorded by the service but not sent: their sending is another test file's subject.
 *
 * `queue` is the in-process queue (`drain()` waits until every message is handled), `port` what the
 * functions send through; `reconciler(user, advanceSec)` is the reconciler of `user`'s organization
 * with its clock `advanceSec` seconds ahead.
 *
 * @example
 * afterEach(closeEngines);
 * const { api, queue } = pipelineEngine(testRunner());
 * const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'])]);
 * await queue.drain();
 */
export function pipelineEngine(
  runner: AgentRunner,
  options: { through?: (queue: MemoryQueue) => MessageQueue; policy?: StagePolicy } = {},
) {
  const consumers: MemoryQueueOptions['consumers'] = { 'webhook-delivery': async () => ({ batchItemFailures: [] }) };
  const memory = memoryQueue({ consumers, visibilityTimeoutSeconds: 0.05 });
  opened.push(memory);
  const queue = options.through?.(memory) ?? memory;
  consumers['pipeline-stage'] = pipelineStageHandler({
    ports: { queue, runner },
    retryDelaysSeconds: [0.01, 0.01],
    ...options.policy,
  });
  return {
    queue: memory,
    port: queue,
    api: agentPipelinesHandler({ ports: { queue } }),
    tenantConfig: tenantConfigHandler({ ports: { queue } }),
    reconciler: (user: TestUser, advanceSec = 0) =>
      pipelineReconcilerHandler({
        ports: { queue, clock: fixedClock(new Date(Date.now() + advanceSec * 1000)) },
        orgId: user.orgId,
        retryDelaysSeconds: [0.01, 0.01],
      }),
  };
}

/**
 * A stage of the built-in qa-tester agent, named in its config for the test runner (`config.stage`).
 * Its 200-token cap keeps the estimate of up to 50 such stages within the 10,000 tokens a new
 * organization holds.
 */
export const stage = (name: string, dependsOn: string[] = [], config: Record<string, unknown> = {}) => ({
  name,
  agent: 'qa-tester',
  depends_on: dependsOn,
  config: { stage: name, max_tokens: 200, ...config },
});

/** Creates a pipeline of `stages` as `user`; its id. */
export async function createPipeline(
  api: GroupHandler,
  user: TestUser,
  stages: unknown[],
  name = `P${Date.now()}`,
): Promise<number> {
  const response = await call(api, 'POST', '/agent-pipelines', { token: user.token, body: { name, stages } });
  if (response.status !== 201) throw new Error(`create failed: ${JSON.stringify(response.body)}`);
  return response.body.data.id;
}

/** Executes pipeline `id` as `user`; the execution as the 202 answers it. */
export async function execute(api: GroupHandler, user: TestUser, id: number, inputs: Record<string, unknown> = {}) {
  const path = `/agent-pipelines/${id}/execute`;
  const response = await call(api, 'POST', path, { token: user.token, body: { inputs } });
  if (response.status !== 202) throw new Error(`execute failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; status: string; stages: Array<Record<string, unknown>> };
}

/** Creates a pipeline of `stages` and executes it without inputs; the pipeline's and the execution's ids. */
export async function start(api: GroupHandler, user: TestUser, stages: unknown[]) {
  const id = await createPipeline(api, user, stages);
  const execution = await execute(api, user, id);
  return { id, executionId: execution.id };
}

/** The execution as GET answers it (its `data`). */
export async function readExecution(api: GroupHandler, user: TestUser, id: number, executionId: number) {
  const path = `/agent-pipelines/${id}/executions/${executionId}`;
  return (await call(api, 'GET', path, { token: user.token })).body.data;
}

/** An execution's stage statuses by stage name. */
export const statusesOf = (execution: { stages: Array<{ name: string; status: string }> }) =>
  Object.fromEntries(execution.stages.map((item) => [item.name, item.status]));

/** The token balance of `user`'s organization. */
export const balanceOf = async (user: TestUser): Promise<number> =>
  (await call(tokens, 'GET', '/tokens/balance', { token: user.token })).body.data.balance;

/** Subscribes `user`'s organization to pipeline_completed and pipeline_failed; the PATCH's answer. */
export const subscribeToPipelineEvents = (tenantConfig: GroupHandler, user: TestUser) =>
  call(tenantConfig, 'PATCH', '/tenant-config', {
    token: user.token,
    body: {
      webhooks: {
        pipeline_completed: 'https://hooks.example.com/done',
        pipeline_failed: 'https://hooks.example.com/x',
      },
    },
  });

/** The payloads of the webhook deliveries recorded for `user`'s organization, newest first. */
export async function webhookPayloads(tenantConfig: GroupHandler, user: TestUser) {
  const log = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', { token: user.token });
  return Promise.all(
    log.body.data.map(
      async (delivery: { id: string }) =>
        (await call(tenantConfig, 'GET', `/tenant-config/webhook-deliveries/${delivery.id}`, { token: user.token }))
          .body.data.payload,
    ),
  );
}

/**
 * Sets a stage's status directly, as a message that read an older state of the execution, or a sender
 * that stopped halfway, would leave it.
 */
export async function setStageStatus(orgId: string, executionId: number, name: string, status: StageItem['status']) {
  await table.update({
    Key: executionKeys.stage(orgId, executionId, name),
    UpdateExpression: 'SET #status = :status',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':status': status },
    reason: 'test',
  });
}

/**
 * Writes a running execution of a one-stage pipeline 1 ("release") directly, as the engine writes it,
 * with its entry in the running index; its stages are the test's to write.
 */
export async function seedRunningExecution(orgId: string, id: number, startedAt: string): Promise<void> {
  const item: ExecutionItem = {
    ...executionKeys.byId(orgId, 1, id),
    id,
    pipeline_id: 1,
    pipeline_name: 'release',
    version: 1,
    status: 'running',
    inputs: {},
    stages_total: 1,
    stages_succeeded: 0,
    tokens_used: 0,
    started_at: startedAt,
    finished_at: null,
    created_by: 'test',
    gsi1pk: executionKeys.runningPk,
    gsi1sk: executionKeys.runningSort(startedAt, orgId, 1, id),
  };
  await table.put({ Item: item });
}

/** Polls `condition` until it holds (at most 5 s). */
export async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
