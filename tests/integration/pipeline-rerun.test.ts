import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler as tokens } from '#functions/http/tokens';
import type { GroupHandler } from '#lib/http/group-handler';
import { runningExecutionItems } from '#lib/pipelines/execution-records';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import {
  balanceOf,
  closeEngines,
  pipelineEngine,
  readExecution,
  runsOf,
  setStageStatus,
  stage,
  start,
  statusesOf,
  subscribeToPipelineEvents,
  testRunner,
  webhookPayloads,
} from '#tests/support/pipelines';

/**
 * Rerunning a failed or cancelled execution end to end in one process: the agent-pipelines function, an
 * in-process queue handing each stage message to the real stage consumer, a test runner, DynamoDB Local.
 */

afterEach(closeEngines);

beforeAll(async () => {
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

const rerun = (api: GroupHandler, user: TestUser, id: number, executionId: number, body?: unknown) =>
  call(
    api,
    'POST',
    `/agent-pipelines/${id}/executions/${executionId}/rerun`,
    as(user, body === undefined ? {} : { body }),
  );

/** The stages the ledger debited for `executionId`, by their reference ids. */
async function debitedStages(user: TestUser, executionId: number): Promise<string[]> {
  const list = await call(
    tokens,
    'GET',
    '/tokens/transactions',
    as(user, { query: { type: 'consume', limit: '100' } }),
  );
  if (list.status !== 200) throw new Error(`ledger failed: ${JSON.stringify(list.body)}`);
  const prefix = `pipeline-${executionId}-`;
  return list.body.data
    .map((entry: { reference_id: string | null }) => entry.reference_id ?? '')
    .filter((reference: string) => reference.startsWith(prefix))
    .map((reference: string) => reference.slice(prefix.length))
    .sort();
}

const isRunningIndexed = async (user: TestUser, executionId: number) =>
  (await runningExecutionItems()).some((item) => item.pk === `T#${user.orgId}` && item.id === executionId);

describe('rerunning an execution', () => {
  it('runs only the failed and skipped stages again, reusing the outputs and tokens of succeeded ones', async () => {
    // Prepare: b fails its three attempts, so c is skipped.
    const user = await newUser('rerun');
    const runner = testRunner({ failing: ['b'] });
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [
      stage('a'),
      stage('b', ['a']),
      stage('c', ['b'], { prompt: 'Use {{a.summary}} and {{b.summary}}' }),
    ]);
    await queue.drain();
    const failed = await readExecution(api, user, id, executionId);
    const before = await balanceOf(user);
    runner.failing.clear();

    // Act
    const response = await rerun(api, user, id, executionId, {});
    await queue.drain();
    const done = await readExecution(api, user, id, executionId);

    // Assess
    expect(failed.status).toBe('failed');
    expect(statusesOf(failed)).toEqual({ a: 'succeeded', b: 'failed', c: 'skipped' });
    expect(response.status).toBe(202);
    expect(response.body.data).toMatchObject({
      id: executionId,
      status: 'running',
      finished_at: null,
      reruns: 1,
      rerun_at: expect.any(String),
      stages_succeeded: 1,
      rerun: { stages: ['b', 'c'], estimated_tokens: 400 },
    });
    expect(statusesOf(response.body.data)).toEqual({ a: 'succeeded', b: 'queued', c: 'pending' });
    expect(response.body.data.stages[1]).toMatchObject({ attempts: 0, error: null, finished_at: null });
    expect([runsOf(runner, 'a').length, runsOf(runner, 'b').length, runsOf(runner, 'c').length]).toEqual([1, 4, 1]);
    expect(runsOf(runner, 'c')[0]?.request.instructions).toBe('Use a done and b done');
    expect(done).toMatchObject({ status: 'succeeded', stages_succeeded: 3, tokens_used: 300, reruns: 1 });
    expect(done.finished_at).toEqual(expect.any(String));
    expect(done.stages[0]).toMatchObject({ output: { summary: 'a done' }, attempts: 1 });
    expect(done.stages[1]).toMatchObject({ status: 'succeeded', attempts: 1, error: null });
    expect(await balanceOf(user)).toBe(before - 200);
    expect(await debitedStages(user, executionId)).toEqual(['a', 'b', 'c']);
    expect(await isRunningIndexed(user, executionId)).toBe(false);
  });

  it('reruns a pipeline of more stages than one transaction takes', async () => {
    // Prepare: the root fails, so its 149 dependents are skipped; 150 stage resets take two transactions.
    const user = await newUser('rerun-large');
    const runner = testRunner({ failing: ['root'], each: 10 });
    const { api, queue } = pipelineEngine(runner);
    const leaves = Array.from({ length: 149 }, (_, at) => stage(`s${at}`, ['root'], { max_tokens: 50 }));
    const { id, executionId } = await start(api, user, [stage('root', [], { max_tokens: 50 }), ...leaves]);
    await queue.drain();
    runner.failing.clear();

    // Act
    const response = await rerun(api, user, id, executionId);
    await queue.drain();
    const done = await readExecution(api, user, id, executionId);

    // Assess
    expect(response.status).toBe(202);
    expect(response.body.data.rerun.stages).toHaveLength(150);
    expect(done).toMatchObject({ status: 'succeeded', stages_succeeded: 150 });
    expect(runner.runs).toHaveLength(3 + 150);
  }, 30_000);

  it('puts the execution back in the running index and answers 409 to a rerun while it runs', async () => {
    // Prepare: the rerun's b is held, so the execution stays running.
    const user = await newUser('rerun-running');
    const runner = testRunner({ failing: ['b'], held: [] });
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'])]);
    await queue.drain();
    runner.failing.clear();
    const hold = testRunner({ held: ['b'] });
    const second = pipelineEngine(hold);
    const first = await rerun(second.api, user, id, executionId);
    await hold.started('b');

    // Act
    const again = await rerun(second.api, user, id, executionId);
    const indexed = await isRunningIndexed(user, executionId);
    hold.release();
    await second.queue.drain();

    // Assess
    expect(first.status).toBe(202);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain('running');
    expect(indexed).toBe(true);
    expect((await readExecution(api, user, id, executionId)).status).toBe('succeeded');
    expect(await isRunningIndexed(user, executionId)).toBe(false);
  });

  it('answers 409 to a rerun of an execution that succeeded', async () => {
    // Prepare
    const user = await newUser('rerun-succeeded');
    const runner = testRunner();
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [stage('a')]);
    await queue.drain();

    // Act
    const response = await rerun(api, user, id, executionId);
    await queue.drain();

    // Assess
    expect(response.status).toBe(409);
    expect(response.body.error.message).toContain('succeeded');
    expect(runsOf(runner, 'a')).toHaveLength(1);
    expect((await readExecution(api, user, id, executionId)).reruns).toBe(0);
  });

  it('starts one rerun of two sent at once: one 202, one 409', async () => {
    // Prepare
    const user = await newUser('rerun-twice');
    const runner = testRunner({ failing: ['b'] });
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a']), stage('c', ['b'])]);
    await queue.drain();
    runner.failing.clear();

    // Act
    const responses = await Promise.all([rerun(api, user, id, executionId), rerun(api, user, id, executionId)]);
    await queue.drain();
    const done = await readExecution(api, user, id, executionId);

    // Assess
    expect(responses.map((response) => response.status).sort()).toEqual([202, 409]);
    expect(runsOf(runner, 'b')).toHaveLength(4);
    expect(runsOf(runner, 'c')).toHaveLength(1);
    expect(done).toMatchObject({ status: 'succeeded', reruns: 1, tokens_used: 300 });
  });

  it('answers 402 with needed and available when the balance is below the rerun’s estimate', async () => {
    // Prepare: a consumes 1,500 of the 10,000 tokens a new organization has; b's estimate is 9,000.
    const user = await newUser('rerun-poor');
    const runner = testRunner({ failing: ['b'], tokens: { a: 1500 } });
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'], { max_tokens: 9000 })]);
    await queue.drain();
    const available = await balanceOf(user);
    runner.failing.clear();

    // Act
    const response = await rerun(api, user, id, executionId);
    await queue.drain();
    const after = await readExecution(api, user, id, executionId);

    // Assess
    expect(response.status).toBe(402);
    expect(response.body.error.details).toEqual([
      { path: 'params.executionId', message: expect.any(String), needed: 9000, available },
    ]);
    expect(after).toMatchObject({ status: 'failed', reruns: 0 });
    expect(statusesOf(after)).toEqual({ a: 'succeeded', b: 'failed' });
    expect(runsOf(runner, 'b')).toHaveLength(3);
  });

  it('answers 404 for an unknown pipeline or execution, and for another organization’s', async () => {
    // Prepare
    const user = await newUser('rerun-missing');
    const other = await newUser('rerun-outsider');
    const runner = testRunner({ failing: ['a'] });
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [stage('a')]);
    await queue.drain();

    // Act
    const noExecution = await rerun(api, user, id, 999_999);
    const noPipeline = await rerun(api, user, 999_999, executionId);
    const foreign = await rerun(api, other, id, executionId);

    // Assess
    expect(noExecution.status).toBe(404);
    expect(noExecution.body.error.message).toContain('Execution');
    expect(noPipeline.status).toBe(404);
    expect(noPipeline.body.error.message).toContain('Pipeline');
    expect(foreign.status).toBe(404);
    expect((await readExecution(api, user, id, executionId)).status).toBe('failed');
  });

  it('refuses a body with fields: the rerun takes none', async () => {
    // Prepare
    const user = await newUser('rerun-body');
    const { api } = pipelineEngine(testRunner());

    // Act
    const response = await rerun(api, user, 1, 1, { inputs: { feature: 'x' } });

    // Assess
    expect(response.status).toBe(400);
  });

  it('reruns a cancelled execution, keeping a stage that finished its run after the cancel', async () => {
    // Prepare: a is running when the execution is cancelled, so b (after a) is cancelled before it runs;
    // c, independent, has succeeded.
    const user = await newUser('rerun-cancelled');
    const runner = testRunner({ held: ['a'] });
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [
      stage('a'),
      stage('b', ['a'], { prompt: 'After {{a.summary}}' }),
      stage('c'),
    ]);
    await runner.started('a');
    await runner.started('c');
    const cancel = await call(api, 'POST', `/agent-pipelines/${id}/executions/${executionId}/cancel`, as(user));
    const whileRunning = await rerun(api, user, id, executionId);
    runner.release();
    await queue.drain();
    const cancelled = await readExecution(api, user, id, executionId);
    const before = await balanceOf(user);

    // Act
    const response = await rerun(api, user, id, executionId);
    await queue.drain();
    const done = await readExecution(api, user, id, executionId);

    // Assess
    expect(cancel.status).toBe(200);
    expect(whileRunning.status).toBe(409);
    expect(whileRunning.body.error.message).toContain('still running (a)');
    expect(statusesOf(cancelled)).toEqual({ a: 'cancelled', b: 'cancelled', c: 'succeeded' });
    expect(response.status).toBe(202);
    expect(response.body.data.rerun).toEqual({ stages: ['b'], estimated_tokens: 200 });
    expect(statusesOf(response.body.data)).toEqual({ a: 'succeeded', b: 'queued', c: 'succeeded' });
    expect([runsOf(runner, 'a').length, runsOf(runner, 'b').length, runsOf(runner, 'c').length]).toEqual([1, 1, 1]);
    expect(runsOf(runner, 'b')[0]?.request.instructions).toBe('After a done');
    expect(done).toMatchObject({ status: 'succeeded', stages_succeeded: 3, tokens_used: 300 });
    expect(await balanceOf(user)).toBe(before - 100);
    expect(await debitedStages(user, executionId)).toEqual(['a', 'b', 'c']);
  });

  it('completes at once a cancelled execution whose stages all finished their runs', async () => {
    // Prepare: the only stage is running when the execution is cancelled; it finishes, keeping its output.
    const user = await newUser('rerun-nothing');
    const runner = testRunner({ held: ['a'] });
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [stage('a')]);
    await runner.started('a');
    await call(api, 'POST', `/agent-pipelines/${id}/executions/${executionId}/cancel`, as(user));
    runner.release();
    await queue.drain();
    const before = await balanceOf(user);

    // Act
    const response = await rerun(api, user, id, executionId);
    await queue.drain();

    // Assess
    expect(response.status).toBe(202);
    expect(response.body.data).toMatchObject({
      status: 'succeeded',
      stages_succeeded: 1,
      reruns: 1,
      rerun: { stages: [], estimated_tokens: 0 },
    });
    expect(statusesOf(response.body.data)).toEqual({ a: 'succeeded' });
    expect(runsOf(runner, 'a')).toHaveLength(1);
    expect(await balanceOf(user)).toBe(before);
    expect(await isRunningIndexed(user, executionId)).toBe(false);
  });

  it('emits pipeline_failed, then pipeline_completed once the rerun succeeds, and nothing when it starts', async () => {
    // Prepare
    const user = await newUser('rerun-events');
    const runner = testRunner({ failing: ['b'] });
    const { api, tenantConfig, queue } = pipelineEngine(runner);
    await subscribeToPipelineEvents(tenantConfig, user);
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'])]);
    await queue.drain();
    runner.failing.clear();

    // Act
    await rerun(api, user, id, executionId);
    await queue.drain();
    const payloads = await webhookPayloads(tenantConfig, user);

    // Assess
    const seen = payloads.map((payload) => [payload.type, payload.data.execution.id, payload.data.execution.status]);
    expect(seen.sort()).toEqual([
      ['pipeline_completed', executionId, 'succeeded'],
      ['pipeline_failed', executionId, 'failed'],
    ]);
  });

  it('has the reconciler reopen a stage a late message skipped after the rerun set the execution running', async () => {
    // Prepare: a fails, so b is skipped; the rerun's a is held while b is skipped again, as a message that
    // had read the execution failed would skip it, so that a's success finds b not pending.
    const user = await newUser('rerun-reopen');
    const runner = testRunner({ failing: ['a'] });
    const { api, queue } = pipelineEngine(runner);
    const { id, executionId } = await start(api, user, [stage('a'), stage('b', ['a'])]);
    await queue.drain();
    const hold = testRunner({ held: ['a'] });
    const second = pipelineEngine(hold);
    await rerun(second.api, user, id, executionId);
    await hold.started('a');
    await setStageStatus(user.orgId, executionId, 'b', 'skipped');
    hold.release();
    await second.queue.drain();
    const stuck = await readExecution(api, user, id, executionId);

    // Act
    const report = await second.reconciler(user)();
    await second.queue.drain();
    const done = await readExecution(api, user, id, executionId);

    // Assess
    expect(stuck.status).toBe('running');
    expect(statusesOf(stuck)).toEqual({ a: 'succeeded', b: 'skipped' });
    expect(report).toEqual({ executions: 1, actions: 1 });
    expect(done.status).toBe('succeeded');
    expect(runsOf(hold, 'b')).toHaveLength(1);
  });
});
