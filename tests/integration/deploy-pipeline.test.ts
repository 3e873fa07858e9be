import { createHmac, randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler as deployments } from '#functions/http/deployments';
import { bindings } from '#functions/http/webhooks';
import { email } from '#lib/app/email';
import { keys as keyManagement } from '#lib/app/keys';
import { saveCredential } from '#lib/credentials/store';
import { AgentRunError } from '#lib/errors';
import { groupHandler } from '#lib/http/group-handler';
import type { AgentRunner, AgentRunRequest, MessageQueue } from '#lib/kernel/ports';
import { QUEUED_RESEND_AFTER_SEC } from '#lib/pipelines/reconcile';
import { contextWith } from '#tests/support/context';
import { context, httpEvent, loadEvent } from '#tests/support/events';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import { closeEngines, createPipeline, pipelineEngine, stage } from '#tests/support/pipelines';

/**
 * The deploy pipeline end to end in one process: a signed push reaches the real webhooks function, which
 * executes the organization's configured pipeline; the in-process queue hands the stage messages to the
 * real stage consumer, which runs a test runner and writes to DynamoDB Local. Signatures are built here
 * with node:crypto from the git host's public format, never with the code under test.
 */

/** A runner that records each run's resolved config, fails the stages `failing` names for good. */
function testRunner(options: { failing?: string[]; held?: Promise<void> } = {}) {
  const runs: AgentRunRequest[] = [];
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const runner: AgentRunner & { runs: AgentRunRequest[]; started: Promise<void> } = {
    kind: 'local',
    runs,
    started,
    async run(request) {
      markStarted();
      await options.held;
      runs.push(request);
      const stage = String(request.input.stage);
      if (options.failing?.includes(stage)) throw new AgentRunError(`${stage} broke`, { retryable: false });
      return {
        output: { summary: `${stage} done` },
        usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 },
        model: 'test-model',
      };
    },
  };
  return runner;
}

afterEach(closeEngines);

/**
 * The pipeline engine (tests/support/pipelines) and the webhooks function on its queue. `refuse` counts
 * stage messages the queue refuses (as SQS might during an outage) before it accepts them again.
 */
function service(runner: AgentRunner, options: { refuse?: number } = {}) {
  let refuse = options.refuse ?? 0;
  const through = (memory: MessageQueue): MessageQueue => ({
    async send(name, body, sendOptions) {
      if (name === 'pipeline-stage' && refuse > 0) {
        refuse -= 1;
        throw new Error('the queue refused the message');
      }
      await memory.send(name, body, sendOptions);
    },
  });
  const engine = pipelineEngine(runner, { through });
  const webhooks = groupHandler('webhooks', bindings, { ports: { keys: keyManagement, email, queue: engine.port } });
  return {
    ...engine,
    /** Posts an exact raw body as a push, signed with the organization's git secret. */
    async push(user: TestUser & { secret: string }, rawBody: string, delivery: string) {
      const event = httpEvent('POST', '/api/webhooks/git', {
        body: rawBody,
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-github-delivery': delivery,
          'x-hub-signature-256': `sha256=${createHmac('sha256', user.secret).update(rawBody, 'utf8').digest('hex')}`,
        },
        query: { org: user.orgId },
      });
      const response = (await webhooks(event, context())) as APIGatewayProxyStructuredResultV2;
      return { status: response.statusCode ?? 200, body: JSON.parse(response.body ?? 'null') };
    },
  };
}

type Service = ReturnType<typeof service>;
type Owner = TestUser & { secret: string };

beforeAll(async () => {
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

/** A new organization's owner, whose credential store holds the git webhook secret. */
async function owner(): Promise<Owner> {
  const user = await newUser('deployer');
  const secret = `whsec_${randomBytes(24).toString('hex')}`;
  await saveCredential(contextWith({ keys: keyManagement }), {
    orgId: user.orgId,
    key: 'webhook.git.secret',
    value: secret,
    actor: `user:${user.id}`,
  });
  return { ...user, secret };
}

/** The push sample under a fresh commit, so that its body differs from every other test's. */
function freshPush(): { push: Record<string, unknown>; rawBody: string; sha: string } {
  const push = loadEvent<Record<string, unknown>>('webhooks/git-push');
  const sha = randomBytes(20).toString('hex');
  push.after = sha;
  return { push, rawBody: JSON.stringify(push), sha };
}

/** A stage whose config hands the push's inputs to the agent. */
const deployStage = (name: string, dependsOn: string[] = [], config: Record<string, unknown> = {}) =>
  stage(name, dependsOn, {
    repository: '{{input.repository}}',
    commit: '{{input.commit_sha}}',
    deployment: '{{input.deployment_id}}',
    ...config,
  });

/** Creates a pipeline of `stages` and makes it the organization's deploy pipeline; its id. */
async function configure(app: Service, user: TestUser, stages: unknown[]): Promise<number> {
  const id = await createPipeline(app.api, user, stages, `Deploy ${randomBytes(4).toString('hex')}`);
  const set = await call(app.tenantConfig, 'PATCH', '/tenant-config', as(user, { body: { deploy_pipeline_id: id } }));
  if (set.status !== 200) throw new Error(`configure failed: ${JSON.stringify(set.body)}`);
  return id;
}

async function executionsOf(app: Service, user: TestUser, pipelineId: number) {
  const response = await call(app.api, 'GET', `/agent-pipelines/${pipelineId}/executions`, as(user));
  return response.body.data as Array<Record<string, unknown> & { id: number; status: string }>;
}

async function deploymentOf(user: TestUser, id: string) {
  const response = await call(deployments, 'GET', '/deployments', as(user));
  return (response.body.data as Array<Record<string, unknown>>).find((deployment) => deployment.id === id);
}

const actionOf = (body: { data: { actions: Array<{ type: string }> } }, prefix: string) =>
  body.data.actions.find((action) => action.type.startsWith(prefix));

/**
 * Pushes a fresh commit under a new delivery id and lets the queue go idle: the push's status, its
 * deploy_pipeline action and the deployment it recorded.
 */
async function pushFresh(app: Service, user: Owner) {
  const { rawBody } = freshPush();
  const delivery = crypto.randomUUID();
  const response = await app.push(user, rawBody, delivery);
  await app.queue.drain();
  return {
    status: response.status,
    action: actionOf(response.body, 'deploy_pipeline'),
    deployment: await deploymentOf(user, `git-${delivery}`),
  };
}

describe('a push to the default branch with a deploy pipeline configured', () => {
  it('executes the pipeline with the push’s inputs, and the deployment follows it to success', async () => {
    // Prepare
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runner = testRunner({ held });
    const app = service(runner);
    const user = await owner();
    const pipelineId = await configure(app, user, [deployStage('build'), deployStage('ship', ['build'])]);
    const { rawBody, sha } = freshPush();
    const delivery = crypto.randomUUID();

    // Act
    const response = await app.push(user, rawBody, delivery);
    await runner.started;
    const whileRunning = await deploymentOf(user, `git-${delivery}`);
    release();
    await app.queue.drain();
    const [execution, ...others] = await executionsOf(app, user, pipelineId);
    const done = await deploymentOf(user, `git-${delivery}`);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.actions).toEqual([
      { type: 'deployment.recorded', id: `git-${delivery}`, status: 'pending' },
      {
        type: 'deploy_pipeline.started',
        id: String(execution?.id),
        status: 'running',
        detail: expect.stringContaining(`GET /agent-pipelines/${pipelineId}/executions/${execution?.id}`),
      },
    ]);
    expect(others).toEqual([]);
    expect(execution).toMatchObject({ pipeline_id: pipelineId, status: 'succeeded', stages_succeeded: 2 });
    expect(execution?.inputs).toEqual({
      repository: 'acme-robotics/ops-dashboard',
      branch: 'main',
      commit_sha: sha,
      deployment_id: `git-${delivery}`,
      pusher: 'mirachen',
      compare_url: 'https://github.com/acme-robotics/ops-dashboard/compare/9c1e4d5b2f0a...4f2a7c9e1b3d',
    });
    expect(runner.runs.map((run) => run.input)).toEqual([
      expect.objectContaining({ stage: 'build', repository: 'acme-robotics/ops-dashboard', commit: sha }),
      expect.objectContaining({ stage: 'ship', deployment: `git-${delivery}` }),
    ]);
    expect(whileRunning).toMatchObject({
      status: 'pending',
      pipeline_status: 'running',
      pipeline_id: pipelineId,
      pipeline_execution_id: execution?.id,
      pipeline_error: null,
    });
    expect(done).toMatchObject({
      status: 'pending',
      pipeline_status: 'succeeded',
      pipeline_execution_id: execution?.id,
    });
  });

  it('shows the deployment’s pipeline as failed when the execution fails', async () => {
    // Prepare
    const runner = testRunner({ failing: ['ship'] });
    const app = service(runner);
    const user = await owner();
    await configure(app, user, [deployStage('ship')]);

    // Act
    const pushed = await pushFresh(app, user);

    // Assess
    expect(pushed.deployment).toMatchObject({ pipeline_status: 'failed' });
  });

  it('starts one execution for a redelivered push, a resent body under a new delivery id, and twins', async () => {
    // Prepare
    const runner = testRunner();
    const app = service(runner);
    const user = await owner();
    const pipelineId = await configure(app, user, [deployStage('ship')]);
    const first = freshPush();
    const delivery = crypto.randomUUID();
    const twins = freshPush();
    const twinDelivery = crypto.randomUUID();

    // Act
    const original = await app.push(user, first.rawBody, delivery);
    const redelivered = await app.push(user, first.rawBody, delivery);
    const resent = await app.push(user, first.rawBody, crypto.randomUUID());
    // Two deliveries of one push at the same moment: both pass the early look, one transaction wins.
    const together = await Promise.all([
      app.push(user, twins.rawBody, twinDelivery),
      app.push(user, twins.rawBody, twinDelivery),
    ]);
    await app.queue.drain();
    const executions = await executionsOf(app, user, pipelineId);

    // Assess
    expect(actionOf(original.body, 'deploy_pipeline')?.type).toBe('deploy_pipeline.started');
    for (const repeat of [redelivered, resent]) {
      expect(repeat.status).toBe(200);
      expect(repeat.body.data).toMatchObject({ duplicate: true, actions: [] });
    }
    expect(together.map((response) => response.status)).toEqual([200, 200]);
    expect(together.map((response) => response.body.data.duplicate).sort()).toEqual([false, true]);
    expect(executions.map((execution) => execution.inputs)).toEqual([
      expect.objectContaining({ commit_sha: twins.sha, deployment_id: `git-${twinDelivery}` }),
      expect.objectContaining({ commit_sha: first.sha, deployment_id: `git-${delivery}` }),
    ]);
    expect(executions.map((execution) => execution.status)).toEqual(['succeeded', 'succeeded']);
    expect(runner.runs).toHaveLength(2);
  });

  it('writes the stages that do not fit beside the delivery before it, and runs the pipeline once', async () => {
    // Prepare
    const runner = testRunner();
    const app = service(runner);
    const user = await owner();
    // 97 stages and the execution fit in one transaction, but not beside the delivery's four items.
    const stages = Array.from({ length: 97 }, (_, at) => deployStage(`s${at}`, [], { max_tokens: 50 }));
    const pipelineId = await configure(app, user, stages);
    const { rawBody } = freshPush();
    const delivery = crypto.randomUUID();

    // Act
    const response = await app.push(user, rawBody, delivery);
    const redelivered = await app.push(user, rawBody, delivery);
    await app.queue.drain();
    const executions = await executionsOf(app, user, pipelineId);

    // Assess
    expect(actionOf(response.body, 'deploy_pipeline')?.type).toBe('deploy_pipeline.started');
    expect(redelivered.body.data.duplicate).toBe(true);
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({ status: 'succeeded', stages_total: 97, stages_succeeded: 97 });
    expect(runner.runs).toHaveLength(97);
  });

  it('loses no trigger when the root stage cannot be queued: the reconciler sends it', async () => {
    // Prepare
    const runner = testRunner();
    const app = service(runner, { refuse: 1 });
    const user = await owner();
    const pipelineId = await configure(app, user, [deployStage('ship')]);
    const { rawBody } = freshPush();
    const delivery = crypto.randomUUID();

    // Act
    const response = await app.push(user, rawBody, delivery);
    await app.queue.drain();
    const [stalled] = await executionsOf(app, user, pipelineId);
    await app.reconciler(user, QUEUED_RESEND_AFTER_SEC + 5)();
    await app.queue.drain();
    const executions = await executionsOf(app, user, pipelineId);

    // Assess
    expect(response.status).toBe(200);
    expect(actionOf(response.body, 'deploy_pipeline')?.type).toBe('deploy_pipeline.started');
    expect(stalled).toMatchObject({ status: 'running', stages: [expect.objectContaining({ status: 'queued' })] });
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({ id: stalled?.id, status: 'succeeded' });
    expect(runner.runs).toHaveLength(1);
  });
});

describe('a push to the default branch whose deploy pipeline cannot run', () => {
  it('says no pipeline is configured, and writes no execution', async () => {
    // Prepare
    const app = service(testRunner());
    const user = await owner();

    // Act
    const pushed = await pushFresh(app, user);

    // Assess
    expect(pushed.status).toBe(200);
    expect(pushed.action).toEqual({
      type: 'deploy_pipeline.not_configured',
      detail: 'No deploy pipeline is configured for this organization; the deployment stays pending',
    });
    expect(pushed.deployment).toMatchObject({
      pipeline_status: 'not_configured',
      pipeline_id: null,
      pipeline_execution_id: null,
      pipeline_error: null,
    });
  });

  it('says the configured pipeline no longer exists when it was deleted', async () => {
    // Prepare
    const app = service(testRunner());
    const user = await owner();
    const pipelineId = await configure(app, user, [deployStage('ship')]);
    await call(app.api, 'DELETE', `/agent-pipelines/${pipelineId}`, as(user));

    // Act
    const pushed = await pushFresh(app, user);

    // Assess
    expect(pushed.status).toBe(200);
    expect(pushed.action).toEqual({
      type: 'deploy_pipeline.not_configured',
      detail: expect.stringContaining(`deploy pipeline ${pipelineId} no longer exists`),
    });
    expect(pushed.deployment).toMatchObject({
      pipeline_status: 'not_configured',
      pipeline_id: pipelineId,
      pipeline_execution_id: null,
      pipeline_error: expect.stringContaining('no longer exists'),
    });
  });

  it('records that the balance is below the estimate, answers 200, and starts nothing', async () => {
    // Prepare
    const runner = testRunner();
    const app = service(runner);
    const user = await owner();
    // A new organization holds 10,000 tokens; this stage alone is estimated at 20,000.
    const pipelineId = await configure(app, user, [deployStage('ship', [], { max_tokens: 20_000 })]);

    // Act
    const pushed = await pushFresh(app, user);

    // Assess
    expect(pushed.status).toBe(200);
    expect(pushed.action).toEqual({
      type: 'deploy_pipeline.failed_to_start',
      status: 'failed_to_start',
      detail: expect.stringMatching(/token balance is below .*needs an estimated 20000 tokens, the balance has 10000/),
    });
    expect(pushed.deployment).toMatchObject({
      status: 'pending',
      pipeline_status: 'failed_to_start',
      pipeline_id: pipelineId,
      pipeline_execution_id: null,
      pipeline_error: expect.stringContaining('needs an estimated 20000 tokens'),
    });
    expect(await executionsOf(app, user, pipelineId)).toEqual([]);
    expect(runner.runs).toEqual([]);
  });

  it('records the inputs its stages reference that a push does not give', async () => {
    // Prepare
    const app = service(testRunner());
    const user = await owner();
    const pipelineId = await configure(app, user, [deployStage('ship', [], { ticket: '{{input.ticket.id}}' })]);

    // Act
    const pushed = await pushFresh(app, user);

    // Assess
    expect(pushed.status).toBe(200);
    expect(pushed.action).toMatchObject({
      type: 'deploy_pipeline.failed_to_start',
      detail: expect.stringContaining('inputs.ticket is referenced by a stage and required'),
    });
    expect(pushed.deployment).toMatchObject({
      pipeline_status: 'failed_to_start',
      pipeline_error: expect.stringContaining('inputs.ticket'),
    });
    expect(await executionsOf(app, user, pipelineId)).toEqual([]);
  });
});
