import { randomUUID } from 'node:crypto';
import { type MemoryQueue, memoryQueue } from '#lib/adapters/local/memory-queue';
import type { TableKey } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { QueueName } from '#lib/kernel/ports';
import { logger } from '#lib/logger';

/**
 * The queue of `npm start`: the in-process queue (lib/adapters/local/memory-queue.ts), with every
 * message also kept in the table until its consumer succeeds, as SQS keeps it until it is deleted. A
 * message sent, waiting or being processed when the process stops is sent again when the queue's
 * consumer is connected at the next start (at least once, as SQS delivers), as a redelivery (its
 * `ApproximateReceiveCount` above 1), since which of them were being processed is not kept.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | message | `LOCALQUEUE` | `<queue>#<message id>` | `body` (JSON text), `visible_at` (epoch ms), `dead` |
 *
 * A message that fails `maxReceiveCount` times is kept with `dead: true` (the dead-letter queue) and
 * not sent again. One instance-wide partition, read with one (paged) Query per queue at connect.
 */
export const LOCAL_QUEUE_PARTITION = 'LOCALQUEUE';

interface MessageItem extends TableKey {
  queue: QueueName;
  message_id: string;
  body: string;
  visible_at: number;
  dead?: boolean;
}

const messageKey = (partition: string, queue: QueueName, messageId: string): TableKey => ({
  pk: partition,
  sk: `${queue}#${messageId}`,
});

export interface DurableQueueOptions {
  /** The partition messages are kept in (tests give each their own); `LOCALQUEUE` by default. */
  partition?: string;
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
}

export function durableQueue(options: DurableQueueOptions = {}): MemoryQueue {
  const partition = options.partition ?? LOCAL_QUEUE_PARTITION;
  // Messages this process holds in memory: a connect does not send them a second time.
  const inMemory = new Set<string>();
  const restored = new Set<QueueName>();
  // Messages settled while a connect was reading the stored ones: its read may predate their removal.
  const settledWhileRestoring = new Set<string>();
  let restoring = 0;

  const forget = (queue: QueueName, messageId: string, outcome: 'delivered' | 'dead') => {
    inMemory.delete(messageId);
    if (restoring > 0) settledWhileRestoring.add(messageId);
    const key = messageKey(partition, queue, messageId);
    const write =
      outcome === 'delivered'
        ? table.delete({ Key: key })
        : table.update({
            Key: key,
            UpdateExpression: 'SET dead = :dead',
            ExpressionAttributeValues: { ':dead': true },
          });
    write.catch((error: Error) =>
      logger.warn('the local queue could not update a stored message; it may be delivered again', {
        queue,
        messageId,
        error,
      }),
    );
  };

  const inner = memoryQueue({
    consumers: {},
    holdUntilConnected: true,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    maxReceiveCount: options.maxReceiveCount,
    onSettled: (message, outcome) => forget(message.queue, message.messageId, outcome),
  });

  /** Sends again what an earlier process left stored for `queue`. */
  async function restore(queue: QueueName): Promise<number> {
    restoring += 1;
    try {
      return await restoreStored(queue);
    } finally {
      restoring -= 1;
      if (restoring === 0) settledWhileRestoring.clear();
    }
  }

  async function restoreStored(queue: QueueName): Promise<number> {
    let startKey: Record<string, unknown> | undefined;
    let count = 0;
    do {
      const page = await table.query({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :queue)',
        ExpressionAttributeValues: { ':pk': partition, ':queue': `${queue}#` },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      });
      for (const item of (page.Items ?? []) as MessageItem[]) {
        if (item.dead || inMemory.has(item.message_id) || settledWhileRestoring.has(item.message_id)) continue;
        inMemory.add(item.message_id);
        const delaySeconds = Math.max(0, Math.ceil((item.visible_at - Date.now()) / 1000));
        // The process that stopped may have been processing it: as SQS counts a receive whose processing
        // never finished, its next delivery is a redelivery, so that its consumer finishes what the
        // stopped one may have left half done (a stage's dependents queued but not sent).
        inner.sendAs(queue, item.message_id, item.body, { delaySeconds, receiveCount: 1 });
        count += 1;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return count;
  }

  return {
    ...inner,
    async send(queue, body, sendOptions = {}) {
      const messageId = randomUUID();
      const text = JSON.stringify(body);
      const item: MessageItem = {
        ...messageKey(partition, queue, messageId),
        queue,
        message_id: messageId,
        body: text,
        visible_at: Date.now() + (sendOptions.delaySeconds ?? 0) * 1000,
      };
      // Marked as this process's before it is stored, so a connect reading the stored messages meanwhile
      // does not send it a second time; stored before it is sent, so it is never only in memory.
      inMemory.add(messageId);
      try {
        await table.put({ Item: item });
      } catch (error) {
        inMemory.delete(messageId);
        throw error;
      }
      inner.sendAs(queue, messageId, text, sendOptions);
    },
    connect(queue, consumer) {
      inner.connect(queue, consumer);
      if (restored.has(queue)) return;
      restored.add(queue);
      restore(queue)
        .then((count) => {
          if (count > 0) logger.info('the local queue sent again the messages a previous run left', { queue, count });
        })
        .catch((error: Error) =>
          console.error(`local queue: reading the stored messages of ${queue} failed (${error.message})`),
        );
    },
  };
}

let shared: MemoryQueue | undefined;

/**
 * The queue of this process in local mode: durable (kept in the table), its consumers connected by the
 * local runtime from serverless.yml's `sqs` events; until then messages wait, as in SQS.
 */
export function localQueue(): MemoryQueue {
  shared ??= durableQueue();
  return shared;
}
