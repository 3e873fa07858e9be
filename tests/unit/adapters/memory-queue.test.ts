import { createHash } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { memoryQueue, type QueueConsumer } from '#lib/adapters/local/memory-queue';
import { loadEvent } from '#tests/support/events';

/**
 * The in-process queue behaves as SQS with a Lambda event source mapping: SQS-shaped events, delays,
 * partial batch failure, visibility timeout, redrive to a dead-letter list after maxReceiveCount.
 */
function recordingConsumer(answer: (event: SQSEvent, call: number) => SQSBatchResponse | Promise<SQSBatchResponse>) {
  const events: SQSEvent[] = [];
  const consumer: QueueConsumer = async (event) => {
    events.push(structuredClone(event));
    return answer(event, events.length - 1);
  };
  return { events, consumer };
}

const noFailures = (): SQSBatchResponse => ({ batchItemFailures: [] });

describe('memoryQueue', () => {
  it('hands the consumer an SQS event shaped like the sample event', async () => {
    // Prepare
    const { events, consumer } = recordingConsumer(noFailures);
    const queue = memoryQueue({ consumers: { 'webhook-delivery': consumer }, region: 'eu-west-1' });
    const sample = loadEvent<SQSEvent>('sqs/webhook-delivery').Records[0];

    // Act
    await queue.send('webhook-delivery', { attempt: 1 });
    await queue.drain();

    // Assess
    const record = events[0]?.Records[0];
    expect(Object.keys(record ?? {}).sort()).toEqual(Object.keys(sample ?? {}).sort());
    expect(Object.keys(record?.attributes ?? {}).sort()).toEqual(Object.keys(sample?.attributes ?? {}).sort());
    expect(record).toMatchObject({
      body: '{"attempt":1}',
      md5OfBody: createHash('md5').update('{"attempt":1}').digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:webhook-delivery',
      awsRegion: 'eu-west-1',
      attributes: { ApproximateReceiveCount: '1' },
    });
  });

  it('returns from send before the consumer has run', async () => {
    // Prepare
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let finished = false;
    const queue = memoryQueue({
      consumers: {
        'webhook-delivery': async () => {
          await gate;
          finished = true;
          return noFailures();
        },
      },
    });

    // Act
    await queue.send('webhook-delivery', { attempt: 1 });
    const finishedWhenSendReturned = finished;
    open();
    await queue.drain();

    // Assess
    expect(finishedWhenSendReturned).toBe(false);
    expect(finished).toBe(true);
  });

  it('delivers messages that become visible together in one batch, and delayed ones later', async () => {
    // Prepare
    const { events, consumer } = recordingConsumer(noFailures);
    const queue = memoryQueue({ consumers: { 'webhook-delivery': consumer } });

    // Act
    await queue.send('webhook-delivery', { n: 'late' }, { delaySeconds: 0.05 });
    await queue.send('webhook-delivery', { n: 1 });
    await queue.send('webhook-delivery', { n: 2 });
    await queue.drain();

    // Assess
    expect(events.map((event) => event.Records.map((record) => JSON.parse(record.body).n))).toEqual([[1, 2], ['late']]);
  });

  it('delivers again only the records reported in batchItemFailures, counting receives', async () => {
    // Prepare
    const { events, consumer } = recordingConsumer((event, call) => ({
      batchItemFailures:
        call === 0
          ? event.Records.filter((record) => JSON.parse(record.body).n === 2).map((record) => ({
              itemIdentifier: record.messageId,
            }))
          : [],
    }));
    const queue = memoryQueue({
      consumers: { 'webhook-delivery': consumer },
      visibilityTimeoutSeconds: 0.01,
    });

    // Act
    await queue.send('webhook-delivery', { n: 1 });
    await queue.send('webhook-delivery', { n: 2 });
    await queue.drain();

    // Assess
    expect(events).toHaveLength(2);
    const retried = events[1]?.Records ?? [];
    expect(retried.map((record) => JSON.parse(record.body).n)).toEqual([2]);
    expect(retried[0]?.attributes.ApproximateReceiveCount).toBe('2');
    expect(retried[0]?.messageId).toBe(events[0]?.Records[1]?.messageId);
    expect(queue.deadLetters).toEqual([]);
  });

  it('retries the whole batch when the consumer throws or names an unknown record', async () => {
    // Prepare
    // One message, so the outcome cannot depend on how messages happen to be batched.
    const { events, consumer } = recordingConsumer((_event, call) => {
      if (call === 0) throw new Error('consumer crashed');
      if (call === 1) return { batchItemFailures: [{ itemIdentifier: 'no-such-record' }] };
      return noFailures();
    });
    const queue = memoryQueue({
      consumers: { 'webhook-delivery': consumer },
      visibilityTimeoutSeconds: 0.01,
    });

    // Act
    await queue.send('webhook-delivery', { n: 1 });
    await queue.drain();

    // Assess: received again after the throw and after the unknown record id, then done.
    expect(events.map((event) => event.Records.map((record) => record.body))).toEqual([
      ['{"n":1}'],
      ['{"n":1}'],
      ['{"n":1}'],
    ]);
  });

  it('moves a record to the dead-letter list after maxReceiveCount failed receives', async () => {
    // Prepare
    const { events, consumer } = recordingConsumer((event) => ({
      batchItemFailures: event.Records.map((record) => ({ itemIdentifier: record.messageId })),
    }));
    const queue = memoryQueue({
      consumers: { 'webhook-delivery': consumer },
      visibilityTimeoutSeconds: 0.01,
      maxReceiveCount: 3,
    });

    // Act
    await queue.send('webhook-delivery', { n: 1 });
    await queue.drain();

    // Assess
    expect(events).toHaveLength(3);
    expect(queue.deadLetters).toEqual([
      { queue: 'webhook-delivery', messageId: expect.any(String), body: '{"n":1}', receiveCount: 3 },
    ]);
  });

  it('refuses a message for a queue without a consumer', async () => {
    // Prepare
    const queue = memoryQueue({ consumers: {} });

    // Act
    const sending = queue.send('webhook-delivery', { n: 1 });

    // Assess
    await expect(sending).rejects.toThrow('no consumer');
  });
});
