import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRunner, MessageQueue } from '#lib/kernel/ports';
import { runningExecutionItems } from '#lib/pipelines/execution-records';
import { STAGE_TIMEOUT_DEFAULT } from '#lib/pipelines/pipeline-keys';
import { QUEUED_RESEND_AFTER_SEC, STAGE_TIMEOUT_MARGIN_SEC } from '#lib/pipelines/reconcile';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import {
  closeEngines,
  pipelineEngine,
  readExecution,
  setStageStatus,
  stage,
  start,
  statusesOf,
  waitFor,
} from '#tests/support/pipelines';

/**
 * The pipeline reconciler against DynamoDB Local: an execution is started through the API, its stage
 * messages go through an in-process queue to the real stage consumer, and the engine is made to stop
 * somewhere (a consumer that never returns, a message dropped, a stage left pending); the reconciler,
 * run with a clock moved forward, must drive the execution to its end with each stage run to success once.
 */

/** A runner that records the stages it finished and holds forever the first run of each stage in `hang`. */
function hangingRunner(hang: string[] = []) {
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

afterEach(closeEngines);

/**
 * The pipeline engine (tests/support/pipelines) on a queue that loses the stage messages `drop` names
 * the first time they are sent (`<stage>#<attempt>`); `sent` counts every stage message sent by name.
 */
function engine(runner: AgentRunner, drop: Set<string> = new Set()) {
  const sent = new Map<string, number>();
  const through = (memory: MessageQueue): MessageQueue => ({
    async send(name, body, options) {
      const { stage, attempt } = body as { stage?: string; attempt?: number };
      const key = `${stage}#${attempt}`;
      if (name === 'pipeline-stage') sent.set(key, (sent.get(key) ?? 0) + 1);
      if (drop.delete(key)) return;
      await memory.send(name, body, options);
    },
  });
  // The hung run's own time limit is left far away: only the reconciler may end it.
  const { api, queue, reconciler } = pipelineEngine(runner, { through, policy: { timeoutMsOf: () => 600_000 } });
  return { api, queue, sent, reconciler };
}

beforeAll(async () => {
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

/** The running index's executions of `user`'s organization. */
const runningOf = async (user: TestUser) =>
  (await runningExecutionItems()).filter((item) => item.pk === `T#${user.orgId}`).map((item) => item.id);

describe('the pipeline reconciler', () => {
  it('retries a stage whose consumer stopped once it is past its timeout, and the execution succeeds', async () => {
    // Prepare
    const user = await newUser('reconcile-crash');
    const runner = hangingRunner(['a']);
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
    const runner = hangingRunner();
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
    const runner = hangingRunner();
    const { api, queue, sent, reconciler } = engine(runner, new Set(['b#1']));
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'])]);
    await queue.drain();
    await setStageStatus(user.orgId, executionId, 'b', 'pending');
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
    const runner = hangingRunner(['held']);
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
