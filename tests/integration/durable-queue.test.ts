import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { durableQueue } from '#lib/adapters/local/durable-queue';
import { table } from '#lib/db/table';

/** The queue of `npm start`: messages kept in the table until consumed, sent again after a restart. */

const stored = async (partition: string) =>
  (
    await table.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': partition },
      ConsistentRead: true,
    })
  ).Items ?? [];

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const bodies = (event: SQSEvent) => event.Records.map((record) => JSON.parse(record.body));

describe('the durable local queue', () => {
  it('keeps a message until its consumer succeeds, then forgets it', async () => {
    // Prepare: a consumer that holds its batch until released
    const partition = `LOCALQUEUE#${randomUUID()}`;
    const queue = durableQueue({ partition });
    const received: unknown[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    queue.connect('webhook-delivery', async (event) => {
      received.push(...bodies(event));
      await gate;
      return { batchItemFailures: [] };
    });

    // Act
    await queue.send('webhook-delivery', { n: 1 });
    await until(() => received.length === 1);
    const whileProcessed = (await stored(partition)).length;
    release();
    await queue.drain();

    // Assess
    expect(whileProcessed).toBe(1);
    expect(received).toEqual([{ n: 1 }]);
    await until(async () => (await stored(partition)).length === 0);
    queue.close();
  });

  it('sends again, after a restart, what was waiting or being processed, each once', async () => {
    // Prepare: a first process accepts three messages; its consumer takes one and never finishes
    const partition = `LOCALQUEUE#${randomUUID()}`;
    const first = durableQueue({ partition });
    await first.send('webhook-delivery', { n: 1 });
    let taken = 0;
    first.connect('webhook-delivery', async (event) => {
      taken += event.Records.length;
      return new Promise(() => undefined);
    });
    await until(() => taken === 1);
    await first.send('webhook-delivery', { n: 2 }, { delaySeconds: 1 });
    await first.send('webhook-delivery', { n: 3 });
    first.close();

    // Act: the next process connects the consumer
    const second = durableQueue({ partition });
    const received: Array<{ n: number }> = [];
    const receiveCounts: string[] = [];
    second.connect('webhook-delivery', async (event) => {
      received.push(...bodies(event));
      receiveCounts.push(...event.Records.map((record) => record.attributes.ApproximateReceiveCount));
      return { batchItemFailures: [] };
    });

    // Assess: each as a redelivery, as SQS hands a message whose processing never finished
    await until(() => received.length >= 3);
    expect(received.map((body) => body.n).sort()).toEqual([1, 2, 3]);
    expect(receiveCounts).toEqual(['2', '2', '2']);
    await until(async () => (await stored(partition)).length === 0);
    second.close();
  });

  it('keeps a message that failed every receive as dead, and does not send it again', async () => {
    // Prepare
    const partition = `LOCALQUEUE#${randomUUID()}`;
    const first = durableQueue({ partition, visibilityTimeoutSeconds: 0, maxReceiveCount: 2 });
    first.connect('webhook-delivery', async () => {
      throw new Error('always fails');
    });

    // Act
    await first.send('webhook-delivery', { n: 'poison' });
    await first.drain();
    await until(async () => (await stored(partition))[0]?.dead === true);
    first.close();
    const second = durableQueue({ partition });
    const received: unknown[] = [];
    second.connect('webhook-delivery', async (event) => {
      received.push(...bodies(event));
      return { batchItemFailures: [] };
    });
    await second.send('webhook-delivery', { n: 'fresh' });
    await second.drain();

    // Assess
    expect(first.deadLetters).toHaveLength(1);
    expect(received).toEqual([{ n: 'fresh' }]);
    second.close();
  });
});
