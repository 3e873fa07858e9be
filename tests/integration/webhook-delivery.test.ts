import type { SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { webhookDeliveryHandler } from '#functions/queue/webhook-delivery';
import { type MemoryQueue, type MemoryQueueOptions, memoryQueue } from '#lib/adapters/local/memory-queue';
import { fixedClock } from '#lib/kernel/clock';
import type { MessageQueue } from '#lib/kernel/ports';
import type { DeliveryPolicy } from '#lib/webhooks/outbound/delivery-attempts';
import { enqueueDelivery, publishEvent, requeueUnqueued } from '#lib/webhooks/outbound/events';
import type { HostLookup } from '#lib/webhooks/outbound/targets';
import { contextWith } from '#tests/support/context';
import { loadEvent } from '#tests/support/events';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import { testQueue } from '#tests/support/queues';
import {
  type Answer,
  type ReceivedWebhook,
  type Receiver,
  startConnectionCounter,
  startReceiver,
  verifyStandardWebhook,
} from '#tests/support/webhook-receiver';

const tenantConfig = tenantConfigHandler({ ports: { queue: testQueue } });

/**
 * Outbound webhooks end to end in one process: the tenant-config function queues, the in-process queue
 * hands SQS events to the real delivery function, which posts to a real HTTP receiver on 127.0.0.1.
 * Retry delays are 20 ms instead of minutes; everything else is as deployed (local mode allows private
 * targets, so the receiver on loopback is reachable; one test turns that off).
 */
const FAST_RETRIES = [0.02, 0.02, 0.02, 0.02, 0.02];
const ATTEMPTS = FAST_RETRIES.length + 1;

/** An in-process queue whose consumer is the delivery function, built with `overrides`. */
function deliveryQueue(overrides: Partial<DeliveryPolicy> = {}): MemoryQueue {
  const consumers: MemoryQueueOptions['consumers'] = {};
  const queue = memoryQueue({ consumers, visibilityTimeoutSeconds: 0.05 });
  consumers['webhook-delivery'] = webhookDeliveryHandler({
    ports: { queue },
    retryDelaysSeconds: FAST_RETRIES,
    ...overrides,
  });
  return queue;
}

let queue: MemoryQueue;
const receivers: Receiver[] = [];

async function receiver(answer?: Answer): Promise<Receiver> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

beforeAll(async () => {
  queue = deliveryQueue();
  testQueue.use(queue);
  await newUser('instanceadmin');
});

afterEach(() => testQueue.use(queue));

afterAll(async () => {
  queue.close();
  await Promise.all(receivers.map((started) => started.close()));
});

/** A new organization with `url` registered for task_completed, and its signing secret. */
async function tenantWithWebhook(url: string): Promise<{ owner: TestUser; options: CallOptions; secret: string }> {
  const owner = await newUser('owner');
  const options = { token: owner.token };
  const response = await call(tenantConfig, 'PATCH', '/tenant-config', {
    ...options,
    body: { webhooks: { task_completed: url } },
  });
  if (response.status !== 200) throw new Error(`PATCH failed: ${JSON.stringify(response.body)}`);
  return { owner, options, secret: response.body.data.signing_secret };
}

const sendTest = (options: CallOptions, body?: unknown) =>
  call(tenantConfig, 'POST', '/tenant-config/webhooks/test', { ...options, ...(body ? { body } : {}) });

const getDelivery = (options: CallOptions, id: string) =>
  call(tenantConfig, 'GET', `/tenant-config/webhook-deliveries/${id}`, options);

const header = (webhook: { headers: Record<string, unknown> }, name: string) => webhook.headers[name] as string;

describe('outbound webhook delivery', () => {
  it('posts a signed Standard Webhooks request that the receiver verifies, and logs the attempt', async () => {
    // Prepare
    const hook = await receiver(() => 204);
    const { owner, options, secret } = await tenantWithWebhook(hook.url);

    // Act
    const queued = await sendTest(options);
    await queue.drain();

    // Assess
    expect(queued.status).toBe(202);
    expect(queued.body.data).toMatchObject({
      id: expect.stringMatching(/^msg_/),
      event_type: 'test',
      url: hook.url,
      status: 'pending',
      attempts: [],
    });
    expect(hook.received).toHaveLength(1);
    const [webhook] = hook.received as [(typeof hook.received)[number]];
    expect(verifyStandardWebhook(secret, webhook)).toBe(true);
    expect(header(webhook, 'content-type')).toBe('application/json');
    expect(header(webhook, 'webhook-id')).toBe(queued.body.data.id);
    expect(header(webhook, 'webhook-timestamp')).toMatch(/^\d{10}$/);
    expect(header(webhook, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const body = JSON.parse(webhook.body);
    expect(body).toEqual({
      type: 'test',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { event: 'task_completed', organization_id: owner.orgId, message: expect.any(String) },
    });
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.status).toBe(200);
    expect(logged.body.data).toMatchObject({
      status: 'succeeded',
      next_attempt_at: null,
      attempts: [{ at: expect.any(String), status_code: 204, duration_ms: expect.any(Number), error: null }],
      payload: body,
    });
  });

  it('retries a failing receiver with the same id, logs every attempt, then marks the delivery failed', async () => {
    // Prepare
    const hook = await receiver(() => 500);
    const { options, secret } = await tenantWithWebhook(hook.url);

    // Act
    const queued = await sendTest(options);
    await queue.drain();

    // Assess
    expect(hook.received).toHaveLength(ATTEMPTS);
    for (const webhook of hook.received) {
      expect(header(webhook, 'webhook-id')).toBe(queued.body.data.id);
      expect(verifyStandardWebhook(secret, webhook)).toBe(true);
    }
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data.status).toBe('failed');
    expect(logged.body.data.next_attempt_at).toBeNull();
    expect(logged.body.data.attempts).toEqual(
      Array.from({ length: ATTEMPTS }, () => ({
        at: expect.any(String),
        status_code: 500,
        duration_ms: expect.any(Number),
        error: 'unexpected status 500',
      })),
    );
    for (const attempt of logged.body.data.attempts) expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('succeeds on a later attempt once the receiver recovers', async () => {
    // Prepare
    const hook = await receiver((_request, index) => (index < 2 ? 503 : 200));
    const { options } = await tenantWithWebhook(hook.url);

    // Act
    const queued = await sendTest(options);
    await queue.drain();

    // Assess
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data.status).toBe('succeeded');
    expect(logged.body.data.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([
      503, 503, 200,
    ]);
  });

  it('answers the API call before a hanging receiver has answered', async () => {
    // Prepare
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let answered = false;
    const hook = await receiver(async () => {
      await released;
      answered = true;
      return 200;
    });
    const { options } = await tenantWithWebhook(hook.url);

    // Act
    const queued = await sendTest(options);
    const answeredWhenTheApiReplied = answered;
    const changed = await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...options,
      body: { webhooks: { agent_error: hook.url } },
    });
    const answeredWhenThePatchReplied = answered;
    await hook.next();
    release();
    await queue.drain();

    // Assess
    expect(queued.status).toBe(202);
    expect(changed.status).toBe(200);
    expect(answeredWhenTheApiReplied).toBe(false);
    expect(answeredWhenThePatchReplied).toBe(false);
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data.status).toBe('succeeded');
  });

  it('signs with the new secret only, once the secret is rotated', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { options, secret: oldSecret } = await tenantWithWebhook(hook.url);
    const rotated = await call(tenantConfig, 'POST', '/tenant-config/webhook-secret/rotate', options);
    const newSecret = rotated.body.data.signing_secret as string;

    // Act
    await sendTest(options);
    await queue.drain();

    // Assess
    expect(newSecret).not.toBe(oldSecret);
    const [webhook] = hook.received as [(typeof hook.received)[number]];
    expect(verifyStandardWebhook(newSecret, webhook)).toBe(true);
    expect(verifyStandardWebhook(oldSecret, webhook)).toBe(false);
  });

  it('sends the test event to the URL of the event named in the body', async () => {
    // Prepare
    const tasks = await receiver(() => 200);
    const errors = await receiver(() => 200);
    const { options } = await tenantWithWebhook(tasks.url);
    await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...options,
      body: { webhooks: { agent_error: errors.url } },
    });

    // Act
    const queued = await sendTest(options, { event: 'agent_error' });
    await queue.drain();

    // Assess
    expect(queued.body.data.url).toBe(errors.url);
    expect(tasks.received).toHaveLength(0);
    expect(JSON.parse(errors.received[0]?.body ?? '{}').data.event).toBe('agent_error');
  });

  it('sends to the address the one lookup answered, with the name in the Host header', async () => {
    // Prepare: a name no resolver knows, so that only the policy's lookup can bring the request to the receiver.
    const hook = await receiver(() => 200);
    const lookups: string[] = [];
    const url = hook.url.replace('127.0.0.1', 'receiver.example.test');
    const { options } = await tenantWithWebhook(url);
    const local = deliveryQueue({
      allowPrivateTargets: true,
      lookup: async (host) => {
        lookups.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    testQueue.use(local);

    // Act
    const queued = await sendTest(options);
    await local.drain();

    // Assess
    expect(lookups).toEqual(['receiver.example.test']);
    expect(hook.received).toHaveLength(1);
    expect(header(hook.received[0] as ReceivedWebhook, 'host')).toBe(new URL(url).host);
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data).toMatchObject({ status: 'succeeded', attempts: [{ status_code: 200, error: null }] });
  });
});

describe('publishEvent', () => {
  it('delivers an event to its registered URL as { type, timestamp, data }', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { owner, secret } = await tenantWithWebhook(hook.url);
    const task = { id: 7, title: 'Summarize the logs', status: 'done' };

    // Act
    const delivery = await publishEvent(contextWith({ queue }), owner.orgId, 'task_completed', {
      task,
      tokens_used: 1234,
    });
    await queue.drain();

    // Assess
    expect(delivery).toMatchObject({ event_type: 'task_completed', status: 'pending', url: hook.url });
    const [webhook] = hook.received as [(typeof hook.received)[number]];
    expect(verifyStandardWebhook(secret, webhook)).toBe(true);
    expect(JSON.parse(webhook.body)).toEqual({
      type: 'task_completed',
      timestamp: expect.any(String),
      data: { task, tokens_used: 1234 },
    });
  });

  it('keeps the delivery pending when the queue refuses, and the sweeper sends it once a minute later', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { owner, options } = await tenantWithWebhook(hook.url);
    const refusing: MessageQueue = {
      send: async () => {
        throw new Error('queue unavailable');
      },
    };

    // Act
    const delivery = await publishEvent(contextWith({ queue: refusing }), owner.orgId, 'task_completed', {
      task: { id: 9 },
    });
    await queue.drain();
    const before = hook.received.length;
    const swept = await requeueUnqueued(contextWith({ queue, clock: fixedClock(new Date(Date.now() + 61_000)) }));
    await queue.drain();

    // Assess
    expect(delivery).toMatchObject({ status: 'pending', attempts: [] });
    expect(before).toBe(0);
    expect(swept).toBe(1);
    expect(hook.received).toHaveLength(1);
    const logged = await getDelivery(options, delivery?.id as string);
    expect(logged.body.data).toMatchObject({ status: 'succeeded', attempts: [{ status_code: 200 }] });
  });

  it('does nothing for an event without a registered URL', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { owner, options } = await tenantWithWebhook(hook.url);

    // Act
    const delivery = await publishEvent(contextWith({ queue }), owner.orgId, 'agent_error', {
      agent: { id: 1 },
    });
    await queue.drain();

    // Assess
    expect(delivery).toBeUndefined();
    expect(hook.received).toHaveLength(0);
    const log = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', options);
    expect(log.body.meta.total).toBe(0);
  });
});

describe('the delivery log', () => {
  it('lists the organization’s deliveries newest first, by page and by status', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { options } = await tenantWithWebhook(hook.url);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await sendTest(options)).body.data.id);
      await queue.drain();
    }

    // Act
    const firstPage = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', {
      ...options,
      query: { limit: '2' },
    });
    const secondPage = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', {
      ...options,
      query: { limit: '2', offset: '2' },
    });
    const failed = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', {
      ...options,
      query: { status: 'failed' },
    });

    // Assess
    expect(firstPage.body.meta).toEqual({ total: 3, limit: 2, offset: 0 });
    expect(firstPage.body.data.map((delivery: { id: string }) => delivery.id)).toEqual([ids[2], ids[1]]);
    expect(secondPage.body.data.map((delivery: { id: string }) => delivery.id)).toEqual([ids[0]]);
    expect(firstPage.body.data[0]).toMatchObject({ status: 'succeeded', attempts: [{ status_code: 200 }] });
    expect(firstPage.body.data[0]).not.toHaveProperty('payload');
    expect(failed.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
  });

  it('answers 404 to another organization for a delivery, and lists none of them', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { options } = await tenantWithWebhook(hook.url);
    const queued = await sendTest(options);
    await queue.drain();
    const stranger = await newUser('stranger');

    // Act
    const single = await getDelivery({ token: stranger.token }, queued.body.data.id);
    const list = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', {
      token: stranger.token,
    });

    // Assess
    expect(single.status).toBe(404);
    expect(single.body.error.code).toBe('NOT_FOUND');
    expect(list.body.meta.total).toBe(0);
  });
});

describe('where private targets are not allowed (ALLOW_PRIVATE_WEBHOOK_TARGETS=false)', () => {
  it('refuses a loopback target without sending, logging each refusal as a failed attempt', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { options } = await tenantWithWebhook(hook.url.replace('http:', 'https:'));
    const deployed = deliveryQueue({ allowPrivateTargets: false, retryDelaysSeconds: [0.02] });
    testQueue.use(deployed);

    // Act
    const queued = await sendTest(options);
    await deployed.drain();

    // Assess
    expect(hook.received).toHaveLength(0);
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data.status).toBe('failed');
    expect(logged.body.data.attempts).toEqual([
      expect.objectContaining({
        status_code: null,
        error: 'Refused: the URL must not point to a loopback address',
      }),
      expect.objectContaining({
        status_code: null,
        error: 'Refused: the URL must not point to a loopback address',
      }),
    ]);
  });

  it.each([
    ['a private address', [{ address: '10.0.0.8', family: 4 }], 'a private address (10.0.0.8)'],
    [
      'a public and a link-local address',
      [
        { address: '93.184.215.14', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
      'a link-local address (169.254.169.254)',
    ],
    [
      'an IPv4-mapped loopback address',
      [{ address: '::ffff:127.0.0.1', family: 6 }],
      'a loopback address (::ffff:127.0.0.1)',
    ],
    ['a unique-local IPv6 address', [{ address: 'fd00::5', family: 6 }], 'a unique-local address (fd00::5)'],
  ])('refuses a host name that resolves to %s', async (_case, addresses, reason) => {
    // Prepare
    const { options } = await tenantWithWebhook('https://hooks.example.test/agent-ops');
    const deployed = deliveryQueue({
      allowPrivateTargets: false,
      retryDelaysSeconds: [],
      lookup: async () => addresses,
    });
    testQueue.use(deployed);

    // Act
    const queued = await sendTest(options);
    await deployed.drain();

    // Assess
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data.status).toBe('failed');
    expect(logged.body.data.attempts).toEqual([
      {
        at: expect.any(String),
        status_code: null,
        duration_ms: expect.any(Number),
        error: `Refused: hooks.example.test resolves to ${reason}`,
      },
    ]);
  });

  it('refuses localhost written with a trailing dot by its name, without resolving it', async () => {
    // Prepare: registered where private targets are allowed, as a URL stored before the rule would be.
    const lookups: string[] = [];
    const { options } = await tenantWithWebhook('https://localhost./hooks');
    const deployed = deliveryQueue({
      allowPrivateTargets: false,
      retryDelaysSeconds: [],
      timeoutMs: 300,
      lookup: async (host) => {
        lookups.push(host);
        return [{ address: '203.0.113.7', family: 4 }];
      },
    });
    testQueue.use(deployed);

    // Act
    const queued = await sendTest(options);
    await deployed.drain();

    // Assess
    expect(lookups).toEqual([]);
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data.attempts).toEqual([
      expect.objectContaining({ status_code: null, error: 'Refused: the URL must not point to localhost' }),
    ]);
  });

  /** A name on the loopback listener's port, and a lookup that records every call and answers `answer(call)`. */
  async function resolvingTarget(answer: (call: number) => Awaited<ReturnType<HostLookup>>) {
    const loopback = await startConnectionCounter();
    onTestFinished(() => loopback.close());
    const lookups: string[] = [];
    const lookup: HostLookup = async (host) => answer(lookups.push(host));
    return { loopback, lookups, lookup, url: `https://rebind.example.test:${loopback.port}/hooks` };
  }

  it('resolves the name once and connects to the address it checked, whatever a second answer would be', async () => {
    // Prepare: a public address (a documentation network, which never answers) first, loopback afterwards.
    const target = await resolvingTarget((call) => [
      call === 1 ? { address: '203.0.113.7', family: 4 } : { address: '127.0.0.1', family: 4 },
    ]);
    const { options } = await tenantWithWebhook(target.url);
    const deployed = deliveryQueue({
      allowPrivateTargets: false,
      retryDelaysSeconds: [],
      timeoutMs: 300,
      lookup: target.lookup,
    });
    testQueue.use(deployed);

    // Act
    const queued = await sendTest(options);
    await deployed.drain();

    // Assess
    expect(target.lookups).toEqual(['rebind.example.test']);
    expect(target.loopback.connections).toBe(0);
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data.attempts).toEqual([
      expect.objectContaining({ status_code: null, error: expect.not.stringMatching(/^Refused/) }),
    ]);
  });

  it('refuses without connecting when one of the addresses a name resolves to is private', async () => {
    // Prepare
    const target = await resolvingTarget(() => [
      { address: '203.0.113.7', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    const { options } = await tenantWithWebhook(target.url);
    const deployed = deliveryQueue({
      allowPrivateTargets: false,
      retryDelaysSeconds: [],
      timeoutMs: 300,
      lookup: target.lookup,
    });
    testQueue.use(deployed);

    // Act
    const queued = await sendTest(options);
    await deployed.drain();

    // Assess
    expect(target.lookups).toEqual(['rebind.example.test']);
    expect(target.loopback.connections).toBe(0);
    const logged = await getDelivery(options, queued.body.data.id);
    expect(logged.body.data.attempts).toEqual([
      expect.objectContaining({
        status_code: null,
        error: 'Refused: rebind.example.test resolves to a loopback address (127.0.0.1)',
      }),
    ]);
  });
});

describe('the delivery function', () => {
  /** A queue that only records what is sent, so that the test hands messages to the function itself. */
  function recordingQueue(): MessageQueue & { messages: unknown[] } {
    const messages: unknown[] = [];
    return { messages, send: async (_queue, body) => void messages.push(body) };
  }

  const sqsEvent = (...bodies: unknown[]): SQSEvent => {
    const event = loadEvent<SQSEvent>('sqs/webhook-delivery');
    const [sample] = event.Records as [SQSEvent['Records'][number]];
    event.Records = bodies.map((body, index) => ({
      ...sample,
      messageId: `m-${index}`,
      body: JSON.stringify(body),
    }));
    return event;
  };

  it('sends an attempt once when its message arrives twice at the same time, or again later', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { owner, options } = await tenantWithWebhook(hook.url);
    const queued = recordingQueue();
    const delivery = await enqueueDelivery(contextWith({ queue: queued }), owner.orgId, {
      type: 'test',
      url: hook.url,
      data: { n: 1 },
    });
    const consumer = webhookDeliveryHandler({ ports: { queue: queued }, retryDelaysSeconds: FAST_RETRIES });
    const [message] = queued.messages;

    // Act
    const together = await Promise.all([consumer(sqsEvent(message)), consumer(sqsEvent(message))]);
    const later = await consumer(sqsEvent(message, message));

    // Assess
    expect(hook.received).toHaveLength(1);
    const logged = await getDelivery(options, delivery.id);
    expect(logged.body.data.status).toBe('succeeded');
    expect(logged.body.data.attempts).toHaveLength(1);
    // The copy that lost the race was told to come back (or found the attempt recorded); none failed later.
    expect(later).toEqual({ batchItemFailures: [] });
    expect(together.flatMap((response) => response.batchItemFailures).length).toBeLessThanOrEqual(1);
  });

  it('queues the retry when a redelivered message finds its attempt logged but the retry never queued', async () => {
    // Prepare
    const hook = await receiver(() => 500);
    const { owner, options } = await tenantWithWebhook(hook.url);
    const queued = recordingQueue();
    const delivery = await enqueueDelivery(contextWith({ queue: queued }), owner.orgId, {
      type: 'test',
      url: hook.url,
      data: {},
    });
    const [first] = queued.messages;
    let refuse = true;
    const flaky: MessageQueue = {
      send: async (name, body, sendOptions) => {
        if (refuse) throw new Error('queue unavailable');
        await queued.send(name, body, sendOptions);
      },
    };
    const consumer = webhookDeliveryHandler({ ports: { queue: flaky }, retryDelaysSeconds: FAST_RETRIES });

    // Act
    const failed = await consumer(sqsEvent(first));
    refuse = false;
    const redelivered = await consumer(sqsEvent(first));

    // Assess
    expect(failed).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-0' }] });
    expect(redelivered).toEqual({ batchItemFailures: [] });
    expect(hook.received).toHaveLength(1);
    expect(queued.messages.slice(1)).toEqual([{ org_id: owner.orgId, delivery_id: delivery.id, attempt: 2 }]);
    const logged = await getDelivery(options, delivery.id);
    expect(logged.body.data).toMatchObject({ status: 'pending', attempts: [{ status_code: 500 }] });
  });

  it('reports only the malformed record of a batch as failed', async () => {
    // Prepare
    const hook = await receiver(() => 200);
    const { owner } = await tenantWithWebhook(hook.url);
    const queued = recordingQueue();
    await enqueueDelivery(contextWith({ queue: queued }), owner.orgId, {
      type: 'test',
      url: hook.url,
      data: {},
    });
    const consumer = webhookDeliveryHandler({ ports: { queue: queued }, retryDelaysSeconds: FAST_RETRIES });

    // Act
    const response = await consumer(sqsEvent(queued.messages[0], { not: 'a delivery' }));

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    expect(hook.received).toHaveLength(1);
  });

  it('moves a message it can never process to the dead-letter list after five receives', async () => {
    // Prepare
    const local = deliveryQueue();

    // Act
    await local.send('webhook-delivery', { org_id: 'o_1', delivery_id: 'not-an-id', attempt: 1 });
    await local.drain();

    // Assess
    expect(local.deadLetters).toEqual([
      {
        queue: 'webhook-delivery',
        messageId: expect.any(String),
        body: JSON.stringify({ org_id: 'o_1', delivery_id: 'not-an-id', attempt: 1 }),
        receiveCount: 5,
      },
    ]);
  });
});
