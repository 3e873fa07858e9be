import { createHmac, randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { billingHandler } from '#functions/http/billing';
import { discoveryEnginesHandler } from '#functions/http/discovery-engines';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { handler as tokens } from '#functions/http/tokens';
import { bindings as webhookBindings } from '#functions/http/webhooks';
import { discoveryRunConsumer } from '#functions/queue/discovery-run';
import { pipelineStageHandler } from '#functions/queue/pipeline-stage';
import { webhookDeliveryHandler } from '#functions/queue/webhook-delivery';
import { email } from '#lib/app/email';
import { keys as keyManagement } from '#lib/app/keys';
import { secrets } from '#lib/app/secrets';
import { findPackage } from '#lib/billing/catalogue';
import { saveCredential } from '#lib/credentials/store';
import { db, TABLE } from '#lib/db/client';
import { tenantPk } from '#lib/db/keys';
import { type GroupHandler, groupHandler } from '#lib/http/group-handler';
import { fixedClock } from '#lib/kernel/clock';
import type { AgentRunner, AgentRunRequest, MessageQueue, QueueName } from '#lib/kernel/ports';
import { checkHubSignature } from '#lib/webhooks/inbound/signatures';
import { verifyInboundWebhook } from '#lib/webhooks/inbound/verification';
import { contextWith } from '#tests/support/context';
import { context, httpEvent, loadEvent } from '#tests/support/events';
import { type CallOptions, call, newUser, outboxFor, type TestUser } from '#tests/support/identity';
import { jobItemsOf } from '#tests/support/jobs';
import { closeEngines, createPipeline, pipelineEngine, stage, testRunner } from '#tests/support/pipelines';
import { recordingScheduler } from '#tests/support/scheduler';
import { type Receiver, startReceiver } from '#tests/support/webhook-receiver';
import { storeInboundSecrets } from '#tests/support/webhook-secrets';

/**
 * The edges of every signed inbound route and every queue consumer: the signature's time window to the
 * second (the clock is a port the test sets, never a sleep), a body changed by one byte, GitHub's
 * published test vector, each event, delivery and message replayed in sequence and all at once (one
 * effect, counted in the stored records and counters), and a batch with one poison message. Signatures
 * are built here with node:crypto from each provider's public format, never with the code under test.
 */

const START = new Date('2026-01-05T12:00:00Z');
const clock = fixedClock(START);
afterEach(() => clock.set(START));
afterEach(closeEngines);

const billing = billingHandler({ ports: { clock } });
const webhooks = groupHandler('webhooks', webhookBindings, { ports: { clock, keys: keyManagement, email } });

/** What the summary counts, by kind of case. */
const counts = { window: 0, changedByte: 0, vector: 0, replays: 0, poison: 0 };

const UNAUTHORIZED = { error: { code: 'UNAUTHORIZED', message: 'Invalid webhook signature', details: [] } };

const hmacHex = (secret: string, message: string) => createHmac('sha256', secret).update(message, 'utf8').digest('hex');
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies of every shape
  body: any;
}

async function postRaw(
  handler: GroupHandler,
  path: string,
  rawBody: string,
  headers: Record<string, string>,
  query?: Record<string, string>,
): Promise<Answer> {
  const event = httpEvent('POST', `/api${path}`, {
    body: rawBody,
    headers: { 'content-type': 'application/json', ...headers },
    ...(query ? { query } : {}),
  });
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode ?? 200, body: JSON.parse(response.body ?? 'null') };
}

/** An organization whose credential store holds the git, deploy and chat webhook secrets. */
type Org = TestUser & { secrets: Record<'git' | 'deploy' | 'chat', string> };

async function organization(prefix = 'owner'): Promise<Org> {
  const user = await newUser(prefix);
  return { ...user, secrets: await storeInboundSecrets(user) };
}

/** Items of the organization whose sort key starts with `prefix`. */
async function itemsOf(orgId: string, prefix: string): Promise<Record<string, unknown>[]> {
  const result = await db.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix },
      ConsistentRead: true,
    }),
  );
  return result.Items ?? [];
}

const balanceOf = async (user: TestUser): Promise<number> =>
  (await call(tokens, 'GET', '/tokens/balance', as(user))).body.data.balance;

/** Everything an inbound webhook of the organization can create or change. */
async function effects(user: TestUser): Promise<Record<string, number>> {
  const prefixes = ['DEPLOYMENT#', 'ALERT#', 'SUPPORT#', 'WEBHOOKEVENT#', 'PAYMENT#', 'JOB#', 'TOKENREF#'];
  const found = await Promise.all(prefixes.map(async (prefix) => (await itemsOf(user.orgId, prefix)).length));
  return {
    ...Object.fromEntries(prefixes.map((prefix, index) => [prefix, found[index]])),
    balance: await balanceOf(user),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The signed routes, each as a way to sign a body at a moment and send it.

/** Stripe's format: `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
const stripeHeaders = (rawBody: string, at: Date, secret = secrets.paymentsWebhookSecret) => {
  const t = seconds(at);
  return { 'stripe-signature': `t=${t},v1=${hmacHex(secret, `${t}.${rawBody}`)}` };
};

/** The deploy and chat format: `X-Webhook-Timestamp` and `X-Webhook-Signature: v1=<hex HMAC of "t.body">`. */
const timestampedHeaders = (secret: string, rawBody: string, at: Date) => ({
  'x-webhook-timestamp': String(seconds(at)),
  'x-webhook-signature': `v1=${hmacHex(secret, `${seconds(at)}.${rawBody}`)}`,
});

/** The git host's format: `X-Hub-Signature-256: sha256=<hex HMAC of the raw body>`, no timestamp. */
const gitHeaders = (secret: string, rawBody: string, delivery = crypto.randomUUID()) => ({
  'x-github-event': 'push',
  'x-github-delivery': delivery,
  'x-hub-signature-256': `sha256=${hmacHex(secret, rawBody)}`,
});

const fresh = (prefix: string) => `${prefix}_${randomBytes(10).toString('hex')}`;

/** A signed payment_intent.succeeded that deposits the starter package into `orgId`. */
const paymentEvent = (orgId: string, id = fresh('evt')) =>
  JSON.stringify({
    id,
    object: 'event',
    livemode: false,
    created: seconds(START),
    type: 'payment_intent.succeeded',
    data: {
      object: {
        id: fresh('pi'),
        object: 'payment_intent',
        amount: 1000,
        amount_received: 1000,
        currency: 'usd',
        metadata: { org_id: orgId, package: 'starter', source: 'payment_intent' },
      },
    },
  });

const deployEvent = () => {
  const event = loadEvent<Record<string, unknown>>('webhooks/deploy-failed');
  event.id = fresh('evt');
  event.deployment_id = fresh('dpl');
  return JSON.stringify(event);
};

const chatEvent = () => {
  const message = loadEvent<Record<string, unknown>>('webhooks/chat-message');
  message.id = fresh('msg');
  return JSON.stringify(message);
};

const gitPush = () => {
  const push = loadEvent<Record<string, unknown>>('webhooks/git-push-logo');
  push.after = randomBytes(20).toString('hex');
  return JSON.stringify(push);
};

interface SignedRoute {
  name: string;
  /** A fresh body of the route for `org`. */
  body: (org: Org) => string;
  /** Sends `rawBody` signed for `signed` (the signing moment; the git scheme has none). */
  send: (org: Org, rawBody: string, signedAt: Date, sentBody?: string) => Promise<Answer>;
}

const SIGNED_ROUTES: SignedRoute[] = [
  {
    name: 'POST /webhooks/payments',
    body: (org) => paymentEvent(org.orgId),
    send: (_org, rawBody, at, sent) =>
      postRaw(billing, '/webhooks/payments', sent ?? rawBody, stripeHeaders(rawBody, at)),
  },
  {
    name: 'POST /billing/webhook',
    body: (org) => paymentEvent(org.orgId),
    send: (_org, rawBody, at, sent) =>
      postRaw(billing, '/billing/webhook', sent ?? rawBody, stripeHeaders(rawBody, at)),
  },
  {
    name: 'POST /webhooks/deploy',
    body: () => deployEvent(),
    send: (org, rawBody, at, sent) =>
      postRaw(webhooks, '/webhooks/deploy', sent ?? rawBody, timestampedHeaders(org.secrets.deploy, rawBody, at), {
        org: org.orgId,
      }),
  },
  {
    name: 'POST /webhooks (chat)',
    body: () => chatEvent(),
    send: (org, rawBody, at, sent) =>
      postRaw(webhooks, '/webhooks', sent ?? rawBody, timestampedHeaders(org.secrets.chat, rawBody, at), {
        org: org.orgId,
      }),
  },
  {
    name: 'POST /webhooks/git',
    body: () => gitPush(),
    send: (org, rawBody, _at, sent) =>
      postRaw(webhooks, '/webhooks/git', sent ?? rawBody, gitHeaders(org.secrets.git, rawBody), { org: org.orgId }),
  },
];

const TIMESTAMPED = SIGNED_ROUTES.filter((route) => route.name !== 'POST /webhooks/git');

let org: Org;

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps the others plain.
  await newUser('instanceadmin');
  org = await organization();
});

describe('the signature time window', () => {
  it.each(TIMESTAMPED.map((route) => [route.name, route] as const))(
    '%s accepts a signature 299 s old or ahead and refuses one 301 s old or ahead, recording nothing then',
    async (_name, route) => {
      // Prepare: each body is signed at START, then the service's clock is moved.
      const cases = { old299: 299, old301: 301, ahead299: -299, ahead301: -301 };

      // Act
      const statuses: Record<string, number> = {};
      for (const [name, offset] of Object.entries(cases)) {
        const rawBody = route.body(org);
        const before = await effects(org);
        clock.set(new Date(START.getTime() + offset * 1000));
        const answer = await route.send(org, rawBody, START);
        clock.set(START);
        statuses[name] = answer.status;
        if (answer.status === 401) {
          expect(answer.body).toEqual(UNAUTHORIZED);
          expect(await effects(org)).toEqual(before);
        }
        counts.window += 1;
      }

      // Assess
      expect(statuses).toEqual({ old299: 200, old301: 401, ahead299: 200, ahead301: 401 });
    },
  );

  it('refuses a payments event replayed after the window although it was valid when sent', async () => {
    // Prepare
    const user = await organization('late');
    const rawBody = paymentEvent(user.orgId);
    const before = await effects(user);

    // Act
    clock.advance(301_000);
    const late = await postRaw(billing, '/webhooks/payments', rawBody, stripeHeaders(rawBody, START));

    // Assess
    expect(late).toEqual({ status: 401, body: UNAUTHORIZED });
    expect(await effects(user)).toEqual(before);
    counts.window += 1;
  });
});

/** Indices where changing one byte keeps the body valid JSON: the signature alone must refuse it. */
function oneByteChanges(rawBody: string): Array<{ name: string; body: string }> {
  const candidates: Array<{ index: number; body: string }> = [];
  for (let index = 0; index < rawBody.length; index += 1) {
    const char = rawBody[index] as string;
    const swapped = /[a-z]/.test(char) ? char.toUpperCase() : /[A-Z]/.test(char) ? char.toLowerCase() : undefined;
    if (!swapped) continue;
    const body = `${rawBody.slice(0, index)}${swapped}${rawBody.slice(index + 1)}`;
    try {
      JSON.parse(body);
      candidates.push({ index, body });
    } catch {
      // `true` turned `tRue` is no longer JSON: refused before the signature, which is not this case.
    }
  }
  const picks = [candidates[0], candidates[Math.floor(candidates.length / 2)], candidates.at(-1)];
  return picks.flatMap((pick) => (pick ? [{ name: `byte ${pick.index} changed`, body: pick.body }] : []));
}

describe('a body changed by one byte after signing', () => {
  it.each(SIGNED_ROUTES.map((route) => [route.name, route] as const))(
    '%s answers 401 for each changed byte and records nothing',
    async (_name, route) => {
      // Prepare
      const rawBody = route.body(org);
      const changes = oneByteChanges(rawBody);
      const before = await effects(org);

      // Act
      const answers = [];
      for (const change of changes) answers.push(await route.send(org, rawBody, START, change.body));
      // A changed structural byte is refused too, by the JSON parser or the signature.
      const broken = await route.send(org, rawBody, START, `${rawBody.slice(0, -1)} `);

      // Assess
      expect(changes).toHaveLength(3);
      for (const answer of answers) expect(answer).toEqual({ status: 401, body: UNAUTHORIZED });
      expect([400, 401]).toContain(broken.status);
      expect(await effects(org)).toEqual(before);
      // The unchanged body is still accepted: the refusals were the changes' doing.
      expect((await route.send(org, rawBody, START)).status).toBe(200);
      counts.changedByte += changes.length + 1;
    },
  );
});

describe('GitHub’s published test vector', () => {
  const SECRET = "It's a Secret to Everybody";
  const PAYLOAD = 'Hello, World!';
  const SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

  it('passes the service’s signature check, and fails it for another payload', () => {
    expect(checkHubSignature(SECRET, PAYLOAD, SIGNATURE)).toEqual({ ok: true });
    expect(checkHubSignature(SECRET, 'Hello, World?', SIGNATURE)).toEqual({ ok: false, reason: 'bad_signature' });
    counts.vector += 2;
  });

  it('passes the inbound verifier with the secret in the organization’s credential store', async () => {
    // Prepare
    const user = await newUser('vector');
    await saveCredential(contextWith({ keys: keyManagement }), {
      orgId: user.orgId,
      key: 'webhook.git.secret',
      value: SECRET,
      actor: `user:${user.id}`,
    });
    const ctx = contextWith({ keys: keyManagement });
    const request = (rawBody: string) => ({
      orgId: user.orgId,
      headers: { 'x-hub-signature-256': SIGNATURE },
      rawBody,
    });

    // Act
    const verified = await verifyInboundWebhook(ctx, 'git', request(PAYLOAD));
    const refused = await verifyInboundWebhook(ctx, 'git', request(`${PAYLOAD} `)).catch((error: Error) => error);

    // Assess
    expect(verified).toEqual({ orgId: user.orgId });
    expect(refused).toMatchObject({ status: 401, message: 'Invalid webhook signature' });
    counts.vector += 2;
  });
});

/** Sends `times` copies one after another, then (a fresh one) `concurrently` copies at once. */
async function replayed<T>(send: () => Promise<T>, times: number, concurrently: boolean): Promise<T[]> {
  if (concurrently) return Promise.all(Array.from({ length: times }, send));
  const answers: T[] = [];
  for (let index = 0; index < times; index += 1) answers.push(await send());
  return answers;
}

const MODES = [
  ['3 times in sequence', 3, false],
  ['10 times at once', 10, true],
] as const;

describe('inbound events replayed', () => {
  it.each(MODES)('a payments event id sent %s credits the balance once', async (_mode, times, concurrently) => {
    // Prepare
    const user = await newUser('payer');
    const rawBody = paymentEvent(user.orgId);
    const headers = stripeHeaders(rawBody, START);
    const before = await effects(user);

    // Act
    const answers = await replayed(() => postRaw(billing, '/webhooks/payments', rawBody, headers), times, concurrently);

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual(Array(times).fill(200));
    expect(answers.filter((answer) => answer.body.data.duplicate === false)).toHaveLength(1);
    const tokensOfStarter = findPackage('starter')?.tokens as number;
    expect(await effects(user)).toEqual({
      ...before,
      'PAYMENT#': (before['PAYMENT#'] ?? 0) + 1,
      'TOKENREF#': (before['TOKENREF#'] ?? 0) + 1,
      balance: (before.balance ?? 0) + tokensOfStarter,
    });
    const purchases = (await call(tokens, 'GET', '/tokens/transactions', as(user))).body.data.filter(
      (entry: { type: string }) => entry.type === 'purchase',
    );
    expect(purchases).toHaveLength(1);
    counts.replays += times;
  });

  it.each(MODES)(
    'a deploy event id sent %s raises one alert and sends one email',
    async (_mode, times, concurrently) => {
      // Prepare
      const team = await organization('deployer');
      const rawBody = deployEvent();
      const headers = timestampedHeaders(team.secrets.deploy, rawBody, START);

      // Act
      const answers = await replayed(
        () => postRaw(webhooks, '/webhooks/deploy', rawBody, headers, { org: team.orgId }),
        times,
        concurrently,
      );

      // Assess
      expect(answers.map((answer) => answer.status)).toEqual(Array(times).fill(200));
      expect(answers.filter((answer) => answer.body.data.duplicate === false)).toHaveLength(1);
      expect(await itemsOf(team.orgId, 'ALERT#')).toHaveLength(1);
      expect(await itemsOf(team.orgId, 'DEPLOYMENT#')).toHaveLength(1);
      expect(await itemsOf(team.orgId, 'WEBHOOKEVENT#')).toHaveLength(1);
      expect(outboxFor(team.email)).toHaveLength(1);
      counts.replays += times;
    },
  );

  it.each(MODES)('a git delivery id sent %s runs the deploy pipeline once', async (_mode, times, concurrently) => {
    // Prepare
    const team = await organization('pusher');
    const runner = testRunner();
    const engine = pipelineEngine(runner);
    const git = groupHandler('webhooks', webhookBindings, {
      ports: { keys: keyManagement, email, queue: engine.port },
    });
    const pipelineId = await createPipeline(engine.api, team, [stage('build'), stage('ship', ['build'])]);
    const set = await call(
      engine.tenantConfig,
      'PATCH',
      '/tenant-config',
      as(team, { body: { deploy_pipeline_id: pipelineId } }),
    );
    expect(set.status).toBe(200);
    const rawBody = gitPush();
    const headers = gitHeaders(team.secrets.git, rawBody);

    // Act
    const answers = await replayed(
      () => postRaw(git, '/webhooks/git', rawBody, headers, { org: team.orgId }),
      times,
      concurrently,
    );
    await engine.queue.drain();

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual(Array(times).fill(200));
    expect(answers.filter((answer) => answer.body.data.duplicate === false)).toHaveLength(1);
    const executions = await call(engine.api, 'GET', `/agent-pipelines/${pipelineId}/executions`, as(team));
    expect(executions.body.data.map((execution: { status: string }) => execution.status)).toEqual(['succeeded']);
    expect(runner.runs.map((run) => run.stage)).toEqual(['build', 'ship']);
    expect(await itemsOf(team.orgId, 'DEPLOYMENT#')).toHaveLength(1);
    expect(await jobItemsOf(team.orgId)).toHaveLength(1);
    counts.replays += times;
  });
});

// ---------------------------------------------------------------------------------------------------------
// Queue consumers, called with SQS events as Lambda calls them.

/** A queue that keeps what is sent, for a test to hand to a consumer itself. */
function keepingQueue() {
  const sent: Array<{ queue: QueueName; body: unknown }> = [];
  const port: MessageQueue = {
    async send(queue, body) {
      sent.push({ queue, body: structuredClone(body) });
    },
  };
  return {
    port,
    sent,
    take: (queue: QueueName) => sent.filter((message) => message.queue === queue).map((m) => m.body),
  };
}

let messageCounter = 0;

/** An SQS event of `bodies` (strings as they are, anything else as JSON), each a new message id. */
function sqsEvent(bodies: unknown[], receiveCount = 1): SQSEvent {
  const template = (loadEvent<SQSEvent>('sqs/pipeline-stage').Records as [SQSRecord])[0];
  return {
    Records: bodies.map((body) => {
      messageCounter += 1;
      return {
        ...structuredClone(template),
        messageId: `msg-${messageCounter}-${randomBytes(4).toString('hex')}`,
        body: typeof body === 'string' ? body : JSON.stringify(body),
        attributes: { ...template.attributes, ApproximateReceiveCount: String(receiveCount) },
      };
    }),
  };
}

type Consumer = (event: SQSEvent) => Promise<SQSBatchResponse>;

/**
 * Delivers `body` `times` times (in sequence or at once, each as its own invocation, as SQS may), then
 * delivers again every copy the consumer reported failed, as SQS does after the visibility timeout, until
 * none is (at most 5 receives, the redrive policy's count).
 */
async function deliverCopies(consumer: Consumer, body: unknown, times: number, concurrently: boolean) {
  const first = await replayed(() => consumer(sqsEvent([body])), times, concurrently);
  let failed = first.reduce((sum, response) => sum + response.batchItemFailures.length, 0);
  for (let receive = 2; failed > 0 && receive <= 5; receive += 1) {
    const again = await Promise.all(Array.from({ length: failed }, () => consumer(sqsEvent([body], receive))));
    failed = again.reduce((sum, response) => sum + response.batchItemFailures.length, 0);
  }
  return failed;
}

/** A runner that records every request and answers at once. */
function countingRunner(): AgentRunner & { requests: AgentRunRequest[] } {
  const requests: AgentRunRequest[] = [];
  return {
    kind: 'local',
    requests,
    async run(request) {
      requests.push(request);
      return {
        output: { summary: 'done', findings: [] },
        usage: { input_tokens: 60, output_tokens: 40, total_tokens: 100 },
        model: 'test-model',
      };
    },
  };
}

interface ConsumerCase {
  name: string;
  /** Queues `count` messages through the API; their bodies. */
  queued: (count: number) => Promise<unknown[]>;
  consumer: Consumer;
  /** The effect of each queued message, counted in stored records and counters, once all is done. */
  effectsOf: () => Promise<Record<string, unknown>>;
  /** What the effects must be once each of `count` messages was processed exactly once. */
  once: (count: number) => Record<string, unknown>;
  /** A message of the right shape that names nothing that exists. */
  orphan: () => unknown;
}

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function pipelineStageCase(): Promise<ConsumerCase> {
  const user = await newUser('stages');
  const kept = keepingQueue();
  const runner = countingRunner();
  const api = agentPipelinesHandler({ ports: { queue: kept.port } });
  const pipelineId = await createPipeline(api, user, [stage('only')]);
  const startBalance = await balanceOf(user);
  const executionIds: number[] = [];
  return {
    name: 'pipeline-stage',
    queued: async (count) => {
      const before = kept.take('pipeline-stage').length;
      for (let index = 0; index < count; index += 1) {
        const response = await call(api, 'POST', `/agent-pipelines/${pipelineId}/execute`, as(user, { body: {} }));
        executionIds.push(response.body.data.id);
      }
      return kept.take('pipeline-stage').slice(before);
    },
    consumer: pipelineStageHandler({ ports: { queue: kept.port, runner } }),
    effectsOf: async () => {
      const executions = await call(api, 'GET', `/agent-pipelines/${pipelineId}/executions`, as(user));
      return {
        runs: runner.requests.length,
        statuses: executions.body.data.map((execution: { status: string }) => execution.status),
        attempts: executions.body.data.map((execution: { stages: Array<{ attempts: number }> }) =>
          execution.stages.map((item) => item.attempts),
        ),
        tokensSpent: startBalance - (await balanceOf(user)),
      };
    },
    once: (count) => ({
      runs: count,
      statuses: Array(count).fill('succeeded'),
      attempts: Array(count).fill([1]),
      tokensSpent: count * 100,
    }),
    orphan: () => ({ org_id: user.orgId, pipeline_id: pipelineId, execution_id: 99_999, stage: 'only', attempt: 1 }),
  };
}

async function webhookDeliveryCase(): Promise<ConsumerCase> {
  const user = await newUser('hooks');
  const kept = keepingQueue();
  const receiver = await startReceiver(() => 204);
  receivers.push(receiver);
  const tenantConfig = tenantConfigHandler({ ports: { queue: kept.port } });
  const set = await call(
    tenantConfig,
    'PATCH',
    '/tenant-config',
    as(user, { body: { webhooks: { task_completed: receiver.url } } }),
  );
  expect(set.status).toBe(200);
  const ids: string[] = [];
  return {
    name: 'webhook-delivery',
    queued: async (count) => {
      const before = kept.take('webhook-delivery').length;
      for (let index = 0; index < count; index += 1) {
        const response = await call(tenantConfig, 'POST', '/tenant-config/webhooks/test', as(user));
        ids.push(response.body.data.id);
      }
      return kept.take('webhook-delivery').slice(before);
    },
    consumer: webhookDeliveryHandler({ ports: { queue: kept.port }, retryDelaysSeconds: [0.01] }),
    effectsOf: async () => {
      const deliveries = await Promise.all(
        ids.map(
          async (id) =>
            (await call(tenantConfig, 'GET', `/tenant-config/webhook-deliveries/${id}`, as(user))).body.data,
        ),
      );
      return {
        requests: receiver.received.length,
        requestIds: receiver.received.map((request) => request.headers['webhook-id']).sort(),
        statuses: deliveries.map((delivery) => delivery.status),
        attempts: deliveries.map((delivery) => delivery.attempts.length),
      };
    },
    once: (count) => ({
      requests: count,
      requestIds: [...ids].sort(),
      statuses: Array(count).fill('succeeded'),
      attempts: Array(count).fill(1),
    }),
    orphan: () => ({ org_id: user.orgId, delivery_id: `msg_${'0'.repeat(23)}`, attempt: 1 }),
  };
}

async function discoveryRunCase(): Promise<ConsumerCase> {
  const user = await newUser('discovery');
  const kept = keepingQueue();
  const runner = countingRunner();
  const api = discoveryEnginesHandler({ ports: { scheduler: recordingScheduler(), queue: kept.port } });
  const created = await call(api, 'POST', '/discovery-engines', as(user, { body: { name: 'Radar', layer: 'market' } }));
  expect(created.status).toBe(201);
  const startBalance = await balanceOf(user);
  return {
    name: 'discovery-run',
    queued: async (count) => {
      const before = kept.take('discovery-run').length;
      for (let index = 0; index < count; index += 1) {
        const response = await call(api, 'POST', '/discovery-engines/radar/run', as(user));
        expect(response.status).toBe(200);
      }
      return kept.take('discovery-run').slice(before);
    },
    consumer: discoveryRunConsumer({ runner }),
    effectsOf: async () => {
      const engine = (await call(api, 'GET', '/discovery-engines/radar', as(user))).body.data;
      return {
        runs: runner.requests.length,
        stats: { runs: engine.stats.runs, succeeded: engine.stats.succeeded },
        tokensSpent: startBalance - (await balanceOf(user)),
      };
    },
    once: (count) => ({ runs: count, stats: { runs: count, succeeded: count }, tokensSpent: count * 100 }),
    orphan: () => ({ org_id: user.orgId, engine_id: created.body.data.id, run_id: 99_999 }),
  };
}

const CONSUMERS = [
  ['pipeline-stage', pipelineStageCase],
  ['webhook-delivery', webhookDeliveryCase],
  ['discovery-run', discoveryRunCase],
] as const;

describe('queue messages replayed', () => {
  it.each(CONSUMERS)(
    '%s: a message delivered 3 times in sequence, another 10 times at once, each has one effect',
    async (_name, make) => {
      // Prepare
      const consumerCase = await make();
      const [inSequence, atOnce] = await consumerCase.queued(2);

      // Act
      const left = [
        await deliverCopies(consumerCase.consumer, inSequence, 3, false),
        await deliverCopies(consumerCase.consumer, atOnce, 10, true),
      ];

      // Assess
      expect(left).toEqual([0, 0]);
      expect(await consumerCase.effectsOf()).toEqual(consumerCase.once(2));
      counts.replays += 13;
    },
  );
});

describe('a batch with one poison message', () => {
  it.each(CONSUMERS)('%s reports exactly the poison message and processes the others', async (_name, make) => {
    // Prepare
    const consumerCase = await make();
    const valid = await consumerCase.queued(4);
    const unparseable = sqsEvent([valid[0], '{"not json', valid[1]]);
    const orphaned = sqsEvent([valid[2], consumerCase.orphan(), valid[3]]);

    // Act
    const first = await consumerCase.consumer(unparseable);
    const second = await consumerCase.consumer(orphaned);

    // Assess
    expect(first).toEqual({ batchItemFailures: [{ itemIdentifier: unparseable.Records[1]?.messageId }] });
    expect(second).toEqual({ batchItemFailures: [{ itemIdentifier: orphaned.Records[1]?.messageId }] });
    expect(await consumerCase.effectsOf()).toEqual(consumerCase.once(4));
    counts.poison += 2;
  });
});

afterAll(() => {
  console.info(
    `webhook edges: ${counts.window} time-window cases, ${counts.changedByte} changed-byte cases, ` +
      `${counts.vector} test-vector checks, ${counts.replays} replayed deliveries, ${counts.poison} poison batches`,
  );
});
