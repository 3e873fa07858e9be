import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { pipelineStageHandler } from '#functions/queue/pipeline-stage';
import { pipelineReconcilerHandler } from '#functions/schedule/pipeline-reconciler';
import { type MemoryQueue, type MemoryQueueOptions, memoryQueue } from '#lib/adapters/local/memory-queue';
import { table } from '#lib/db/table';
import { fixedClock } from '#lib/kernel/clock';
import type { AgentRunner, MessageQueue } from '#lib/kernel/ports';
import { executionKeys } from '#lib/pipelines/execution-keys';
import { runningExecutionItems } from '#lib/pipelines/execution-records';
import { STAGE_TIMEOUT_DEFAULT } from '#lib/pipelines/pipeline-keys';
import { QUEUED_RESEND_AFTER_SEC, STAGE_TIMEOUT_MARGIN_SEC } from '#lib/pipelines/reconcile';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';

/**
 * The pipeline reconciler against DynamoDB Local: an execution is started through the API, its stage
 * messages go through an in-process queue to the real stage consumer, and the engine is made to stop
 * somewhere (a consumer that never returns, a message dropped, a stage left pending); the reconciler,
 * run with a clock moved forward, must drive the execution to its end with each stage run to success once.
 */

/** A runner that records the stages it finished and holds forever the first run of each stage in `hang`. */
function testRunner(hang: string[] = []) {
  const finished: string[] = [];
  const started: string[] = [];
  const hung = new Set<string>();
  const runner: AgentRunner & { finished: string[]; started: string[] } = {
    kind: 'local',
    finished,
    started,
    async run(request) {
      const stage = String(request.input.stage);
      started.push(stage);
      if (hang.includes(stage) && !hung.has(stage)) {
        hung.add(stage);
        await new Promise(() => undefined);
      }
      finished.push(stage);
      return {
        output: { summary: `${stage} done` },
        usage: { input_tokens: 1, output_tokens: 1, total_tokens: 10 },
        model: 'test-model',
      };
    },
  };
  return runner;
}

const queues: MemoryQueue[] = [];
afterEach(() => {
  for (const queue of queues.splice(0)) queue.close();
});

/**
 * The API and the stage consumer on one in-process queue. `drop` names stage messages lost the first
 * time they are sent (`<stage>#<attempt>`); `sent` counts every stage message sent by name.
 */
function engine(runner: AgentRunner, drop: Set<string> = new Set()) {
  const consumers: MemoryQueueOptions['consumers'] = { 'webhook-delivery': async () => ({ batchItemFailures: [] }) };
  const memory = memoryQueue({ consumers, visibilityTimeoutSeconds: 0.05 });
  queues.push(memory);
  const sent = new Map<string, number>();
  const queue: MessageQueue = {
    async send(name, body, options) {
      const { stage, attempt } = body as { stage?: string; attempt?: number };
      const key = `${stage}#${attempt}`;
      if (name === 'pipeline-stage') sent.set(key, (sent.get(key) ?? 0) + 1);
      if (drop.delete(key)) return;
      await memory.send(name, body, options);
    },
  };
  // The hung run's own time limit is left far away: only the reconciler may end it.
  consumers['pipeline-stage'] = pipelineStageHandler({
    ports: { queue, runner },
    retryDelaysSeconds: [0.01, 0.01],
    timeoutMsOf: () => 600_000,
  });
  const reconciler = (user: TestUser, advanceSec = 0) =>
    pipelineReconcilerHandler({
      ports: { queue, clock: fixedClock(new Date(Date.now() + advanceSec * 1000)) },
      orgId: user.orgId,
      retryDelaysSeconds: [0.01, 0.01],
    });
  return { api: agentPipelinesHandler({ ports: { queue } }), queue: memory, sent, reconciler };
}

type Api = ReturnType<typeof engine>['api'];

beforeAll(async () => {
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

const stage = (name: string, dependsOn: string[] = []) => ({
  name,
  agent: 'qa-tester',
  depends_on: dependsOn,
  config: { stage: name, max_tokens: 200 },
});

async function start(api: Api, user: TestUser, stages: unknown[]) {
  const created = await call(api, 'POST', '/agent-pipelines', as(user, { body: { name: `R${Date.now()}`, stages } }));
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const id = created.body.data.id as number;
  const started = await call(api, 'POST', `/agent-pipelines/${id}/execute`, as(user, { body: { inputs: {} } }));
  if (started.status !== 202) throw new Error(`execute failed: ${JSON.stringify(started.body)}`);
  return { id, executionId: started.body.data.id as number };
}

async function readExecution(api: Api, user: TestUser, id: number, executionId: number) {
  return (await call(api, 'GET', `/agent-pipelines/${id}/executions/${executionId}`, as(user))).body.data;
}

const statusesOf = (execution: { stages: Array<{ name: string; status: string }> }) =>
  Object.fromEntries(execution.stages.map((item) => [item.name, item.status]));

/** The running index's executions of `user`'s organization. */
const runningOf = async (user: TestUser) =>
  (await runningExecutionItems()).filter((item) => item.pk === `T#${user.orgId}`).map((item) => item.id);

/** Polls `condition` until it holds (at most 5 s). */
async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the pipeline reconciler', () => {
  it('retries a stage whose consumer stopped once it is past its timeout, and the execution succeeds', async () => {
    // Prepare
    const user = await newUser('reconcile-crash');
    const runner = testRunner(['a']);
    const { api, reconciler } = engine(runner);
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'])]);
    await waitFor(async () => runner.started.includes('a'));
    const early = await reconciler(user, STAGE_TIMEOUT_DEFAULT)();

    // Act
    const late = await reconciler(user, STAGE_TIMEOUT_DEFAULT + STAGE_TIMEOUT_MARGIN_SEC + 1)();
    await waitFor(async () => (await readExecution(api, user, id, executionId)).status === 'succeeded');
    const done = await readExecution(api, user, id, executionId);

    // Assess
    expect(early).toEqual({ executions: 1, actions: 0 });
    expect(late).toEqual({ executions: 1, actions: 1 });
    expect(statusesOf(done)).toEqual({ a: 'succeeded', b: 'succeeded' });
    expect(done.stages[0]).toMatchObject({ name: 'a', attempts: 2 });
    expect(done.stages_succeeded).toBe(2);
    expect(runner.finished).toEqual(['a', 'b']);
  });

  it('sends again the message of a stage queued too long, and the execution succeeds', async () => {
    // Prepare
    const user = await newUser('reconcile-lost');
    const runner = testRunner();
    const { api, queue, sent, reconciler } = engine(runner, new Set(['a#1']));
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'])]);
    const early = await reconciler(user, QUEUED_RESEND_AFTER_SEC - 5)();

    // Act
    const late = await reconciler(user, QUEUED_RESEND_AFTER_SEC + 1)();
    await queue.drain();
    const done = await readExecution(api, user, id, executionId);

    // Assess
    expect(early.actions).toBe(0);
    expect(late.actions).toBe(1);
    expect(sent.get('a#1')).toBe(2);
    expect(done.status).toBe('succeeded');
    expect(runner.finished).toEqual(['a', 'b']);
  });

  it('queues a pending stage whose dependencies have all succeeded once, with two reconcilers at a time', async () => {
    // Prepare: b's message is lost, then b is put back to pending as if its sender had stopped first.
    const user = await newUser('reconcile-pending');
    const runner = testRunner();
    const { api, queue, sent, reconciler } = engine(runner, new Set(['b#1']));
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'])]);
    await queue.drain();
    await table.update({
      Key: executionKeys.stage(user.orgId, executionId, 'b'),
      UpdateExpression: 'SET #status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pending': 'pending' },
      reason: 'test',
    });
    const before = await readExecution(api, user, id, executionId);

    // Act
    const reports = await Promise.all([reconciler(user)(), reconciler(user)()]);
    await queue.drain();
    const done = await readExecution(api, user, id, executionId);

    // Assess
    expect(statusesOf(before)).toEqual({ a: 'succeeded', b: 'pending' });
    expect(reports.map((report) => report.actions).sort()).toEqual([0, 1]);
    expect(sent.get('b#1')).toBe(2);
    expect(done.status).toBe('succeeded');
    expect(runner.finished).toEqual(['a', 'b']);
  });

  it('keeps only running executions in the running index', async () => {
    // Prepare
    const user = await newUser('reconcile-index');
    const runner = testRunner(['held']);
    const { api, reconciler } = engine(runner);
    const hung = await start(api, user, [stage('held')]);
    const quick = await start(api, user, [stage('quick')]);
    await waitFor(async () => (await readExecution(api, user, quick.id, quick.executionId)).status === 'succeeded');
    const whileRunning = await runningOf(user);

    // Act
    const cancelled = await call(
      api,
      'POST',
      `/agent-pipelines/${hung.id}/executions/${hung.executionId}/cancel`,
      as(user),
    );
    const report = await reconciler(user, STAGE_TIMEOUT_DEFAULT * 10)();

    // Assess
    expect(whileRunning).toEqual([hung.executionId]);
    expect(cancelled.status).toBe(200);
    expect(await runningOf(user)).toEqual([]);
    expect(report).toEqual({ executions: 0, actions: 0 });
  });
});
