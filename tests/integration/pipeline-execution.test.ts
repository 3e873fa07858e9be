import type { Context, SQSEvent } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pipelineStageHandler } from '#functions/queue/pipeline-stage';
import type { MemoryQueue } from '#lib/adapters/local/memory-queue';
import { table } from '#lib/db/table';
import { AgentRunError } from '#lib/errors';
import type { AgentRunner, MessageQueue } from '#lib/kernel/ports';
import { executionKeys } from '#lib/pipelines/execution-keys';
import type { StagePolicy } from '#lib/pipelines/stage-run';
import { loadEvent } from '#tests/support/events';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import {
  balanceOf,
  closeEngines,
  createPipeline,
  execute,
  pipelineEngine,
  readExecution,
  runsOf,
  stage,
  statusesOf,
  subscribeToPipelineEvents,
  testRunner,
  waitFor,
  webhookPayloads,
} from '#tests/support/pipelines';

/**
 * Pipeline executions end to end in one process: the agent-pipelines function starts an execution, the
 * in-process queue hands each stage message to the real stage consumer, which runs a test runner and
 * writes to DynamoDB Local. Retry delays are 10 ms instead of seconds.
 */

afterEach(closeEngines);

/**
 * The pipeline engine (tests/support/pipelines) on a queue that, with `twice`, sends every message the
 * service sends two times (a queue that delivers everything twice); `shuffled` delays each copy at
 * random, so that they also arrive out of order.
 *
 * `refuse` names stage messages the queue refuses the first time they are sent (`<stage>#<attempt>`),
 * as SQS might during an outage: the consumer that sends them fails and its message is delivered again.
 */
function engine(
  runner: AgentRunner,
  options: { twice?: boolean; shuffled?: boolean; policy?: StagePolicy; refuse?: Set<string> } = {},
) {
  // Shuffled: each copy waits a random 0–40 ms more, so copies and messages arrive in any order.
  const jitter = (sendOptions?: { delaySeconds?: number }) =>
    options.shuffled ? { delaySeconds: (sendOptions?.delaySeconds ?? 0) + Math.random() * 0.04 } : sendOptions;
  const through = (memory: MemoryQueue): MessageQueue =>
    options.twice
      ? {
          async send(name, body, sendOptions) {
            await memory.send(name, body, jitter(sendOptions));
            await memory.send(name, body, jitter(sendOptions));
          },
        }
      : {
          async send(name, body, sendOptions) {
            const { stage: stageName, attempt } = body as { stage?: string; attempt?: number };
            if (options.refuse?.delete(`${stageName}#${attempt}`)) throw new Error('the queue refused the message');
            await memory.send(name, body, sendOptions);
          },
        };
  return pipelineEngine(runner, { through, policy: options.policy });
}

beforeAll(async () => {
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

/** An SQS event of the stage queue (its recorded shape) carrying `bodies`. */
function sqsEvent(bodies: unknown[]): SQSEvent {
  const event = loadEvent<SQSEvent>('sqs/pipeline-stage');
  const [sample] = event.Records as [SQSEvent['Records'][number]];
  event.Records = bodies.map((body, index) => ({ ...sample, messageId: `m-${index}`, body: JSON.stringify(body) }));
  return event;
}

describe('executing a pipeline', () => {
  it('runs a linear chain in order, consumes each stage’s tokens and succeeds', async () => {
    // Prepare
    const user = await newUser('chain');
    const runner = testRunner();
    const { api, queue } = engine(runner);
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a']), stage('c', ['b'])]);
    const before = await balanceOf(user);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(started).toMatchObject({ status: 'running', pipeline_id: id, stages_total: 3, finished_at: null });
    expect(statusesOf(started as never)).toEqual({ a: 'queued', b: 'pending', c: 'pending' });
    expect(runner.runs.map((run) => run.stage)).toEqual(['a', 'b', 'c']);
    expect(done).toMatchObject({ status: 'succeeded', stages_succeeded: 3, tokens_used: 300 });
    expect(done.finished_at).toEqual(expect.any(String));
    expect(statusesOf(done)).toEqual({ a: 'succeeded', b: 'succeeded', c: 'succeeded' });
    expect(done.stages[0]).toMatchObject({ attempts: 1, tokens_used: 100, output: { summary: 'a done' } });
    expect(await balanceOf(user)).toBe(before - 300);
  });

  it('runs a diamond’s last stage once, after both of its dependencies', async () => {
    // Prepare
    const user = await newUser('diamond');
    const runner = testRunner({ sleepMs: 20 });
    const { api, queue } = engine(runner);
    const id = await createPipeline(api, user, [
      stage('a'),
      stage('b', ['a']),
      stage('c', ['a']),
      stage('d', ['b', 'c']),
    ]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(done.status).toBe('succeeded');
    const [d] = runsOf(runner, 'd');
    expect(runsOf(runner, 'd')).toHaveLength(1);
    const parentsEnded = Math.max(...['b', 'c'].map((name) => runsOf(runner, name)[0]?.endedAt ?? Infinity));
    expect(d?.startedAt).toBeGreaterThanOrEqual(parentsEnded);
  });

  it('fans out to 20 parallel stages and back in to one', async () => {
    // Prepare
    const user = await newUser('fanout');
    const runner = testRunner();
    const { api, queue } = engine(runner);
    const middle = Array.from({ length: 20 }, (_, at) => `m${at}`);
    const id = await createPipeline(api, user, [
      stage('root'),
      ...middle.map((name) => stage(name, ['root'])),
      stage('join', middle),
    ]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(done).toMatchObject({ status: 'succeeded', stages_succeeded: 22, tokens_used: 2200 });
    expect(runner.runs).toHaveLength(22);
    expect(runsOf(runner, 'join')).toHaveLength(1);
  });

  it('fills in inputs, ancestors’ outputs and built-ins in the configs the runner receives', async () => {
    // Prepare
    const user = await newUser('variables');
    const runner = testRunner();
    const { api, queue } = engine(runner);
    const id = await createPipeline(api, user, [
      stage('plan', [], { prompt: 'Plan {{input.feature}} for {{ input.repo.name }}' }),
      stage('build', ['plan'], {
        instructions: 'Build after {{plan.summary}} ({{plan.nested.deep}})',
        plan: '{{plan.nested}}',
        meta: ['{{execution_id}}', '{{pipeline_id}}', '{{stage_name}}', '{{task_id}}', '{{pipeline_name}}'],
      }),
    ]);

    // Act
    const started = await execute(api, user, id, { feature: 'search', repo: { name: 'shop' }, task_id: 42 });
    await queue.drain();

    // Assess
    const [plan] = runsOf(runner, 'plan');
    const [build] = runsOf(runner, 'build');
    expect(plan?.request.instructions).toBe('Plan search for shop');
    expect(plan?.request.input.inputs).toEqual({ feature: 'search', repo: { name: 'shop' }, task_id: 42 });
    expect(build?.request.instructions).toBe('Build after plan done (plan-deep)');
    expect(build?.request.input.plan).toEqual({ deep: 'plan-deep' });
    expect(build?.request.input.meta).toEqual([started.id, id, 'build', 42, expect.stringMatching(/^P\d+$/)]);
    expect(build?.request.agent.name).toBe('qa-tester');
  });

  it('retries a failing stage, then fails the execution and skips the stages after it', async () => {
    // Prepare
    const user = await newUser('failing');
    const runner = testRunner({ failing: ['b'] });
    const { api, queue } = engine(runner);
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a']), stage('c', ['b']), stage('d', ['c'])]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(runsOf(runner, 'b')).toHaveLength(3);
    expect(runsOf(runner, 'c')).toHaveLength(0);
    expect(done.status).toBe('failed');
    expect(done.finished_at).toEqual(expect.any(String));
    expect(statusesOf(done)).toEqual({ a: 'succeeded', b: 'failed', c: 'skipped', d: 'skipped' });
    expect(done.stages[1]).toMatchObject({ attempts: 3, error: 'b broke', tokens_used: 0 });
    expect(done.tokens_used).toBe(100);
  });

  it('cancels a running execution: the running stage ends cancelled and nothing after it runs', async () => {
    // Prepare
    const user = await newUser('cancel');
    const runner = testRunner({ held: ['a'] });
    const { api, queue } = engine(runner);
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a']), stage('c')]);
    const started = await execute(api, user, id);
    await runner.started('a');
    await runner.started('c');

    // Act
    const cancelled = await call(api, 'POST', `/agent-pipelines/${id}/executions/${started.id}/cancel`, as(user));
    runner.release();
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);
    const again = await call(api, 'POST', `/agent-pipelines/${id}/executions/${started.id}/cancel`, as(user));

    // Assess
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
    expect(done.status).toBe('cancelled');
    expect(done.stages.find((item: { name: string }) => item.name === 'a')).toMatchObject({
      status: 'cancelled',
      output: { summary: 'a done' },
    });
    expect(statusesOf(done).b).toBe('cancelled');
    expect(runsOf(runner, 'b')).toHaveLength(0);
    // a (finished after the cancel) and c: both runs' tokens were consumed and are counted.
    expect(done.tokens_used).toBe(200);
    expect(again.status).toBe(409);
  });

  it('answers 402 with needed and available when the balance is below the estimate, writing nothing', async () => {
    // Prepare
    const user = await newUser('poor');
    const { api } = engine(testRunner());
    const id = await createPipeline(api, user, [stage('a', [], { max_tokens: 900_000_000 }), stage('b')]);
    const available = await balanceOf(user);

    // Act
    const response = await call(api, 'POST', `/agent-pipelines/${id}/execute`, as(user, { body: { inputs: {} } }));
    const list = await call(api, 'GET', `/agent-pipelines/${id}/executions`, as(user));

    // Assess
    expect(response.status).toBe(402);
    expect(response.body.error.details).toEqual([
      { path: 'body.inputs', message: expect.any(String), needed: 900_000_200, available },
    ]);
    expect(list.body.data).toEqual([]);
  });

  it('answers 400 naming each referenced input the request lacks', async () => {
    // Prepare
    const user = await newUser('noinputs');
    const { api } = engine(testRunner());
    const id = await createPipeline(api, user, [stage('a', [], { prompt: '{{input.feature}} in {{input.repo.url}}' })]);

    // Act
    const response = await call(api, 'POST', `/agent-pipelines/${id}/execute`, as(user, { body: { inputs: {} } }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.details.map((detail: { path: string }) => detail.path)).toEqual([
      'body.inputs.feature',
      'body.inputs.repo',
    ]);
  });

  it('runs each stage once and ends the same when every message is delivered twice', async () => {
    // Prepare
    const user = await newUser('twice');
    const runner = testRunner({ sleepMs: 5 });
    const { api, queue } = engine(runner, { twice: true });
    const id = await createPipeline(api, user, [
      stage('a'),
      stage('b', ['a']),
      stage('c', ['a']),
      stage('d', ['b', 'c']),
    ]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(done).toMatchObject({ status: 'succeeded', stages_succeeded: 4, tokens_used: 400 });
    expect(runner.runs.map((run) => run.stage).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(done.stages.map((item: { attempts: number }) => item.attempts)).toEqual([1, 1, 1, 1]);
  });

  it('ends the same when every message is delivered twice and out of order as when delivered once', async () => {
    // Prepare
    const stages = [
      stage('a'),
      stage('b', ['a'], { prompt: 'after {{a.summary}}' }),
      stage('c', ['a']),
      stage('d', ['a']),
      stage('e', ['b', 'c', 'd']),
      stage('f', ['c']),
    ];
    const outcome = async (user: TestUser, options: { twice?: boolean; shuffled?: boolean }) => {
      const runner = testRunner({ sleepMs: 5 });
      const { api, queue } = engine(runner, options);
      const id = await createPipeline(api, user, stages);
      const started = await execute(api, user, id);
      await queue.drain();
      const done = await readExecution(api, user, id, started.id);
      return {
        runs: runner.runs.map((run) => run.stage).sort(),
        status: done.status,
        tokens_used: done.tokens_used,
        stages: done.stages.map((item: Record<string, unknown>) => ({
          name: item.name,
          status: item.status,
          attempts: item.attempts,
          summary: (item.output as { summary: string }).summary,
        })),
        balance: await balanceOf(user),
      };
    };

    // Act
    const once = await outcome(await newUser('deliveredonce'), {});
    const shuffled = await outcome(await newUser('shuffled'), { twice: true, shuffled: true });

    // Assess
    expect(once.status).toBe('succeeded');
    expect(once.runs).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(shuffled).toEqual(once);
  });

  it('gives up a stage claimed for an execution cancelled while its message waited, without running it', async () => {
    // Prepare: the execution is cancelled between the cancel's two steps (the execution, then its stages).
    const user = await newUser('claimcancel');
    const runner = testRunner();
    const consumer = pipelineStageHandler({ ports: { queue: { send: async () => {} }, runner } });
    const { api } = engine(runner, { refuse: new Set(['a#1']) });
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a'])]);
    const started = await execute(api, user, id);
    await table.update({
      Key: executionKeys.byId(user.orgId, id, started.id),
      UpdateExpression: 'SET #status = :cancelled',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':cancelled': 'cancelled' },
    });
    const message = { org_id: user.orgId, pipeline_id: id, execution_id: started.id, stage: 'a', attempt: 1 };

    // Act
    await consumer(sqsEvent([message]));
    const read = await readExecution(api, user, id, started.id);

    // Assess
    expect(runner.runs).toHaveLength(0);
    expect(read.stages[0]).toMatchObject({ name: 'a', status: 'cancelled', attempts: 0, started_at: null });
  });

  it('runs the stage’s own agent when a message names another one', async () => {
    // Prepare
    const user = await newUser('agenthint');
    const runner = testRunner();
    const consumer = pipelineStageHandler({ ports: { queue: { send: async () => {} }, runner } });
    const { api } = engine(runner, { refuse: new Set(['a#1']) });
    const id = await createPipeline(api, user, [stage('a')]);
    const started = await execute(api, user, id);
    const message = { org_id: user.orgId, pipeline_id: id, execution_id: started.id, stage: 'a', attempt: 1 };

    // Act
    await consumer(sqsEvent([{ ...message, agent: 'code-reviewer' }]));
    const read = await readExecution(api, user, id, started.id);

    // Assess
    expect(read.status).toBe('succeeded');
    expect(runner.runs.map((run) => run.request.agent.name)).toEqual(['qa-tester']);
  });

  it('runs independent stages side by side: the total is close to the critical path, not the sum', async () => {
    // Prepare
    const user = await newUser('overlap');
    const runner = testRunner({ sleepMs: 200 });
    const { api, queue } = engine(runner);
    const roots = ['r1', 'r2', 'r3', 'r4', 'r5'];
    const id = await createPipeline(api, user, [...roots.map((name) => stage(name)), stage('join', roots)]);

    // Act
    const begin = performance.now();
    const started = await execute(api, user, id);
    await queue.drain();
    const elapsed = performance.now() - begin;
    const done = await readExecution(api, user, id, started.id);

    // Assess: the critical path is two runs (400 ms); one after another they would take 1200 ms.
    expect(done.status).toBe('succeeded');
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeLessThan(900);
  });

  it('lists a pipeline’s executions newest first and answers 404 for an unknown one', async () => {
    // Prepare
    const user = await newUser('listing');
    const { api, queue } = engine(testRunner());
    const id = await createPipeline(api, user, [stage('a')]);
    const first = await execute(api, user, id);
    const second = await execute(api, user, id);
    await queue.drain();

    // Act
    const list = await call(api, 'GET', `/agent-pipelines/${id}/executions`, as(user));
    const missing = await call(api, 'GET', `/agent-pipelines/${id}/executions/999999`, as(user));
    const other = await newUser('outsider');
    const foreign = await call(api, 'GET', `/agent-pipelines/${id}/executions/${first.id}`, as(other));

    // Assess
    expect(list.status).toBe(200);
    expect(list.body.data.map((item: { id: number }) => item.id)).toEqual([second.id, first.id]);
    expect(list.body.meta).toMatchObject({ total: 2 });
    expect(missing.status).toBe(404);
    expect(foreign.status).toBe(404);
  });

  it('emits pipeline_completed and pipeline_failed with the execution and its tokens', async () => {
    // Prepare
    const user = await newUser('events');
    const runner = testRunner({ failing: ['broken'] });
    const { api, tenantConfig, queue } = engine(runner);
    const patched = await subscribeToPipelineEvents(tenantConfig, user);
    const good = await createPipeline(api, user, [stage('a'), stage('b', ['a'])]);
    const bad = await createPipeline(api, user, [stage('broken'), stage('after', ['broken'])]);

    // Act
    const completed = await execute(api, user, good);
    const failed = await execute(api, user, bad);
    await queue.drain();
    const payloads = await webhookPayloads(tenantConfig, user);

    // Assess
    expect(patched.status).toBe(200);
    const byType = Object.fromEntries(payloads.map((payload) => [payload.type, payload.data.execution]));
    expect(Object.keys(byType).sort()).toEqual(['pipeline_completed', 'pipeline_failed']);
    expect(byType.pipeline_completed).toMatchObject({ id: completed.id, status: 'succeeded', tokens_used: 200 });
    expect(byType.pipeline_failed).toMatchObject({ id: failed.id, status: 'failed', tokens_used: 0 });
    expect(byType.pipeline_failed.stages).toEqual([
      expect.objectContaining({ name: 'broken', status: 'failed', error: 'broken broke', attempts: 3 }),
      expect.objectContaining({ name: 'after', status: 'skipped' }),
    ]);
  });

  it('fails an attempt that runs past the stage’s time limit', async () => {
    // Prepare
    const user = await newUser('slow');
    const runner = testRunner({ sleepMs: 300 });
    const { api, queue } = engine(runner, { policy: { timeoutMsOf: () => 30 } });
    const id = await createPipeline(api, user, [stage('slow')]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(done.status).toBe('failed');
    expect(done.stages[0]).toMatchObject({ status: 'failed', attempts: 3, error: expect.stringContaining('longer') });
    expect(done.tokens_used).toBe(0);
  });

  it('cuts a run short before the invocation’s own end and retries it in a later invocation', async () => {
    // Prepare: the first invocation has 30.2 s left, 30 of which it keeps to finish; later ones have 15 min.
    const user = await newUser('deadline');
    const runner = testRunner({ sleepMs: 400 });
    const { api } = engine(runner, { refuse: new Set(['a#1']) });
    const sent: unknown[] = [];
    const consumer = pipelineStageHandler({
      ports: { queue: { send: async (_name, body) => void sent.push(body) }, runner },
      retryDelaysSeconds: [0, 0],
    });
    const invocation = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs }) as Context;
    const id = await createPipeline(api, user, [stage('a')]);
    const started = await execute(api, user, id);
    const message = { org_id: user.orgId, pipeline_id: id, execution_id: started.id, stage: 'a', attempt: 1 };

    // Act
    await consumer(sqsEvent([message]), invocation(30_200));
    const cut = await readExecution(api, user, id, started.id);
    await consumer(sqsEvent(sent.splice(0)), invocation(900_000));
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(cut.stages[0]).toMatchObject({ status: 'queued', attempts: 1, error: expect.stringContaining('longer') });
    expect(done.status).toBe('succeeded');
    expect(done.stages[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('fails a stage at once when its run fails in a way the runner calls permanent', async () => {
    // Prepare
    const user = await newUser('permanent');
    const runs: string[] = [];
    const refusing: AgentRunner = {
      kind: 'local',
      async run(request) {
        runs.push(String(request.input.stage));
        throw new AgentRunError('the provider refused the request', { retryable: false });
      },
    };
    const { api, queue } = engine(refusing);
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a'])]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(runs).toEqual(['a']);
    expect(done.status).toBe('failed');
    expect(done.stages[0]).toMatchObject({ status: 'failed', attempts: 1, error: 'the provider refused the request' });
    expect(statusesOf(done).b).toBe('skipped');
  });

  it('fails a stage whose run the balance cannot pay, without retrying it', async () => {
    // Prepare
    const user = await newUser('unpaid');
    const runner = testRunner({ each: 50_000 });
    const { api, queue } = engine(runner);
    const id = await createPipeline(api, user, [stage('costly'), stage('next', ['costly'])]);
    const before = await balanceOf(user);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(runner.runs).toHaveLength(1);
    expect(done.status).toBe('failed');
    expect(done.stages[0]).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringContaining('balance') });
    expect(statusesOf(done).next).toBe('skipped');
    expect(await balanceOf(user)).toBe(before);
  });

  it('cancels the running executions of a pipeline that is deleted', async () => {
    // Prepare
    const user = await newUser('deleting');
    const runner = testRunner({ held: ['a'] });
    const { api, queue } = engine(runner);
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a'])]);
    const started = await execute(api, user, id);
    await runner.started('a');

    // Act
    const deleted = await call(api, 'DELETE', `/agent-pipelines/${id}`, as(user));
    runner.release();
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(deleted.status).toBe(200);
    expect(done.status).toBe('cancelled');
    expect(statusesOf(done)).toEqual({ a: 'cancelled', b: 'cancelled' });
    expect(runsOf(runner, 'b')).toHaveLength(0);
  });

  it('keeps the result of a stage finishing after another failed the execution, starting nothing', async () => {
    // Prepare
    const user = await newUser('parallelfail');
    const runner = testRunner({ failing: ['broken'], held: ['slow'] });
    const { api, queue } = engine(runner);
    const id = await createPipeline(api, user, [stage('broken'), stage('slow'), stage('after', ['slow'])]);
    const started = await execute(api, user, id);
    await runner.started('slow');

    // Act
    await waitFor(async () => (await readExecution(api, user, id, started.id)).status === 'failed');
    runner.release();
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(done.status).toBe('failed');
    expect(statusesOf(done)).toEqual({ broken: 'failed', slow: 'succeeded', after: 'skipped' });
    expect(done.stages[1]).toMatchObject({ output: { summary: 'slow done' }, tokens_used: 100 });
    expect(done.tokens_used).toBe(100);
    expect(runsOf(runner, 'after')).toHaveLength(0);
  });

  it('sends again what a consumer failed to send: the next stage and the next attempt', async () => {
    // Prepare
    const user = await newUser('refused');
    const runner = testRunner({ failing: [] });
    let failures = 1;
    const flaky: AgentRunner = {
      kind: 'local',
      async run(request) {
        if (request.input.stage === 'c' && failures > 0) {
          failures -= 1;
          throw new AgentRunError('c broke once', { retryable: true });
        }
        return runner.run(request);
      },
    };
    const { api, queue } = engine(flaky, { refuse: new Set(['b#1', 'c#2']) });
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a']), stage('c', ['b'])]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(done.status).toBe('succeeded');
    expect(runner.runs.map((run) => run.stage)).toEqual(['a', 'b', 'c']);
    expect(done.stages.map((item: { attempts: number }) => item.attempts)).toEqual([1, 1, 2]);
  });

  it('answers 202 when the queue refuses a root stage, leaving it queued for the reconciler', async () => {
    // Prepare
    const user = await newUser('rootrefused');
    const runner = testRunner({ failing: [] });
    const { api, queue } = engine(runner, { refuse: new Set(['a#1']) });
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a'])]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const read = await readExecution(api, user, id, started.id);

    // Assess
    expect(started.status).toBe('running');
    expect(statusesOf(read)).toEqual({ a: 'queued', b: 'pending' });
    expect(runner.runs).toHaveLength(0);
  });

  it('keeps the start of an output too large for the stage to hold, and goes on', async () => {
    // Prepare
    const user = await newUser('bigoutput');
    const verbose: AgentRunner = {
      kind: 'local',
      async run() {
        return {
          output: { summary: 'x'.repeat(300_000) },
          usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 },
          model: 'test-model',
        };
      },
    };
    const { api, queue } = engine(verbose);
    const id = await createPipeline(api, user, [stage('talk'), stage('next', ['talk'])]);

    // Act
    const started = await execute(api, user, id);
    await queue.drain();
    const done = await readExecution(api, user, id, started.id);

    // Assess
    expect(done.status).toBe('succeeded');
    expect(done.stages[0].output).toEqual({ summary: 'x'.repeat(4096), truncated: true, note: expect.any(String) });
  });
});
