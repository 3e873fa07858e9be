import type { SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { pipelineStageHandler } from '#functions/queue/pipeline-stage';
import { webhookDeliveryHandler } from '#functions/queue/webhook-delivery';
import { pipelineReconcilerHandler } from '#functions/schedule/pipeline-reconciler';
import {
  type MemoryQueue,
  type MemoryQueueOptions,
  memoryQueue,
  type QueueConsumer,
} from '#lib/adapters/local/memory-queue';
import { fixedClock } from '#lib/kernel/clock';
import type { KeyManagement, MessageQueue } from '#lib/kernel/ports';
import { QUEUED_RESEND_AFTER_SEC } from '#lib/pipelines/reconcile';
import { MAX_RECEIVES } from '#lib/queue/partial-batch';
import { enqueueDelivery } from '#lib/webhooks/outbound/events';
import { contextWith } from '#tests/support/context';
import { call, newUser } from '#tests/support/identity';
import {
  createPipeline,
  execute,
  readExecution,
  runsOf,
  stage,
  statusesOf,
  testRunner,
} from '#tests/support/pipelines';
import { type Receiver, startReceiver } from '#tests/support/webhook-receiver';

/**
 * Queue consumers whose processing throws: a port they need fails every time (the queue refuses the
 * message that would carry the work on; the key service cannot unseal the signing secret). The real
 * consumers run on the local queue adapter with the deployed redrive policy (MAX_RECEIVES receives, a
 * visibility timeout of 50 ms instead of minutes): the message is received again and again, its receive
 * count rising, then moved to the dead-letter list, and what it was for must end failed, saying why, not
 * stay pending or running for ever.
 *
 * The other ways these consumers fail are their own tests' subject: a runner or receiver that fails is
 * retried by the domain and ends failed without a redelivery (pipeline-execution, webhook-delivery,
 * discovery-runs); the discovery run worker, which needs no port but the table, meets its outage in
 * faults.test.ts.
 */

const faults = { queueRefusals: 0, keyFailures: 0, runnerFailures: 0, receives: 0, deadLetters: 0 };
const queues: MemoryQueue[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  await newUser('queueadmin');
});

afterEach(() => {
  for (const queue of queues.splice(0)) queue.close();
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  console.info(
    `queue faults: ${faults.runnerFailures} runner failures, ${faults.queueRefusals} queue refusals, ` +
      `${faults.keyFailures} key service failures injected; ${faults.receives} receives, ` +
      `${faults.deadLetters} messages dead-lettered`,
  );
});

/**
 * The local queue with the deployed redrive policy, whose consumer for `name` is `consumer`; every
 * receive count the consumer is handed is kept in `receives`, by message id.
 */
function redrivenQueue(name: 'pipeline-stage' | 'webhook-delivery') {
  const consumers: MemoryQueueOptions['consumers'] = {
    'webhook-delivery': async () => ({ batchItemFailures: [] }),
  };
  const queue = memoryQueue({ consumers, visibilityTimeoutSeconds: 0.05, maxReceiveCount: MAX_RECEIVES });
  queues.push(queue);
  const receives = new Map<string, number[]>();
  const connect = (consumer: QueueConsumer) => {
    queue.connect(name, async (event: SQSEvent) => {
      for (const record of event.Records) {
        faults.receives += 1;
        receives.set(record.messageId, [
          ...(receives.get(record.messageId) ?? []),
          Number(record.attributes.ApproximateReceiveCount),
        ]);
      }
      return consumer(event);
    });
  };
  return { queue, receives, connect };
}

describe('the pipeline stage consumer, when the queue refuses what it sends', () => {
  it('is received MAX_RECEIVES times, dead-lettered, and the reconciler carries the execution to failed', async () => {
    // Prepare: stage a fails every run; the queue refuses every retry's message until it recovers.
    const user = await newUser('stagefault');
    const runner = testRunner({ failing: ['a'] });
    const { queue, receives, connect } = redrivenQueue('pipeline-stage');
    let refusing = true;
    const port: MessageQueue = {
      async send(name, body, options) {
        if (refusing && name === 'pipeline-stage' && (body as { attempt: number }).attempt > 1) {
          faults.queueRefusals += 1;
          throw new Error('the queue refused the message');
        }
        await queue.send(name, body, options);
      },
    };
    connect(pipelineStageHandler({ ports: { queue: port, runner }, retryDelaysSeconds: [0.01, 0.01] }));
    const api = agentPipelinesHandler({ ports: { queue: port } });
    const id = await createPipeline(api, user, [stage('a'), stage('b', ['a'])]);
    const started = await execute(api, user, id);

    // Act
    await queue.drain();
    const stuck = await readExecution(api, user, id, started.id);
    refusing = false;
    const reconcile = pipelineReconcilerHandler({
      ports: { queue: port, clock: fixedClock(new Date(Date.now() + (QUEUED_RESEND_AFTER_SEC + 1) * 1000)) },
      orgId: user.orgId,
      retryDelaysSeconds: [0.01, 0.01],
    });
    await reconcile();
    await queue.drain();
    const ended = await readExecution(api, user, id, started.id);

    // Assess
    faults.runnerFailures += runsOf(runner, 'a').length;
    faults.deadLetters += queue.deadLetters.length;
    const [first] = [...receives.values()];
    expect(first).toEqual(Array.from({ length: MAX_RECEIVES }, (_, index) => index + 1));
    expect(queue.deadLetters).toEqual([
      expect.objectContaining({ queue: 'pipeline-stage', receiveCount: MAX_RECEIVES }),
    ]);
    expect(JSON.parse(queue.deadLetters[0]?.body ?? '{}')).toMatchObject({ stage: 'a', attempt: 1 });
    expect(statusesOf(stuck)).toEqual({ a: 'queued', b: 'pending' });
    expect(ended.status).toBe('failed');
    expect(statusesOf(ended)).toEqual({ a: 'failed', b: 'skipped' });
    expect(ended.stages[0]).toMatchObject({ attempts: 3, error: 'a broke' });
    expect(runsOf(runner, 'a')).toHaveLength(3);
  });
});

describe('the webhook delivery consumer, when the key service fails', () => {
  it('is received MAX_RECEIVES times, dead-lettered, and the delivery is logged failed with why', async () => {
    // Prepare: the organization's signing secret exists; the consumer's key service then fails every call.
    const owner = await newUser('keyfault');
    const hook = await startReceiver(() => 204);
    receivers.push(hook);
    const tenantConfig = tenantConfigHandler({ ports: { queue: { send: async () => {} } } });
    const configured = await call(tenantConfig, 'PATCH', '/tenant-config', {
      token: owner.token,
      body: { webhooks: { task_completed: hook.url } },
    });
    expect(configured.status).toBe(200);
    const failingKeys: KeyManagement = {
      generateDataKey: async () => {
        faults.keyFailures += 1;
        throw new Error('the key service is unavailable');
      },
      decryptDataKey: async () => {
        faults.keyFailures += 1;
        throw new Error('the key service is unavailable');
      },
    };
    const { queue, receives, connect } = redrivenQueue('webhook-delivery');
    connect(webhookDeliveryHandler({ ports: { queue, keys: failingKeys }, retryDelaysSeconds: [0.02] }));

    // Act
    const delivery = await enqueueDelivery(contextWith({ queue }), owner.orgId, {
      type: 'test',
      url: hook.url,
      data: {},
    });
    await queue.drain();
    const logged = await call(tenantConfig, 'GET', `/tenant-config/webhook-deliveries/${delivery.id}`, {
      token: owner.token,
    });

    // Assess
    faults.deadLetters += queue.deadLetters.length;
    expect([...receives.values()]).toEqual([Array.from({ length: MAX_RECEIVES }, (_, index) => index + 1)]);
    expect(queue.deadLetters).toEqual([
      expect.objectContaining({ queue: 'webhook-delivery', receiveCount: MAX_RECEIVES }),
    ]);
    expect(hook.received).toEqual([]);
    expect(logged.body.data).toMatchObject({
      status: 'failed',
      next_attempt_at: null,
      attempts: [{ status_code: null, error: expect.stringMatching(/^not sent: /) }],
    });
  });
});
