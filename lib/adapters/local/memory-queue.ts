import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { MessageQueue, QueueName } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { MAX_RECEIVES } from '#lib/queue/partial-batch';

/**
 * The local queue adapter: an in-process stand-in for SQS with a Lambda event source mapping. A sent
 * message becomes visible after its delay and is handed to the queue's consumer (the same handler
 * Lambda runs) in an SQS event of up to `batchSize` records. Records the consumer reports in
 * `batchItemFailures` (or all of them, when it throws) become visible again after the visibility
 * timeout, until they have been received `maxReceiveCount` times; then they move to `deadLetters`,
 * as a redrive policy moves them to a dead-letter queue.
 *
 * `send` only schedules: it never waits for, or fails because of, the consumer.
 */

/** An SQS-triggered Lambda handler; the context argument Lambda also passes is not needed here. */
export type QueueConsumer = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface MemoryQueueOptions {
  consumers: Partial<Record<QueueName, QueueConsumer>>;
  /** Seconds a failed record stays hidden before it is delivered again (SQS's default is 30). */
  visibilityTimeoutSeconds?: number;
  /** Receives before a failing record goes to the dead-letter list (the redrive policy's; MAX_RECEIVES). */
  maxReceiveCount?: number;
  /** Records per consumer invocation (the event source mapping's batch size). */
  batchSize?: number;
  region?: string;
  /** Accept messages for a queue with no consumer yet and hand them over once one is connected. */
  holdUntilConnected?: boolean;
  /**
   * Told when a message leaves the queue for good: `delivered` (its consumer succeeded) or `dead` (moved
   * to the dead-letter list). A durable queue deletes or marks its stored copy here.
   */
  onSettled?: (message: { queue: QueueName; messageId: string }, outcome: 'delivered' | 'dead') => void;
}

export interface DeadLetter {
  queue: QueueName;
  messageId: string;
  body: string;
  receiveCount: number;
}

export interface MemoryQueue extends MessageQueue {
  /** Resolves once no message is waiting, visible or being processed (retries included). */
  drain(): Promise<void>;
  /** Messages that failed `maxReceiveCount` times, oldest first. */
  readonly deadLetters: DeadLetter[];
  /** Cancels every pending timer; messages not yet delivered are dropped. */
  close(): void;
  /** Connects a queue's consumer (as an event source mapping does) and hands it what is waiting. */
  connect(queue: QueueName, consumer: QueueConsumer): void;
  /**
   * `send` under a message id the caller chose (a durable queue's stored message, sent again);
   * `receiveCount`: the receives it already had, which its next delivery counts on from.
   */
  sendAs(
    queue: QueueName,
    messageId: string,
    body: string,
    options?: { delaySeconds?: number; receiveCount?: number },
  ): void;
}

interface Message {
  queue: QueueName;
  messageId: string;
  body: string;
  md5: string;
  sentAt: number;
  firstReceivedAt?: number;
  receiveCount: number;
}

/** SQS refuses longer delays; mirrored so that local runs behave as deployed ones. */
const MAX_DELAY_SECONDS = 900;

export function memoryQueue(options: MemoryQueueOptions): MemoryQueue {
  const visibilityTimeoutMs = (options.visibilityTimeoutSeconds ?? 30) * 1000;
  const maxReceiveCount = options.maxReceiveCount ?? MAX_RECEIVES;
  const batchSize = options.batchSize ?? 10;
  const region = options.region ?? 'local';
  const deadLetters: DeadLetter[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const ready = new Map<QueueName, Message[]>();
  const flushScheduled = new Set<QueueName>();
  let waiters: Array<() => void> = [];
  // Messages waiting for their delay or visibility timeout, ready, or in a running invocation.
  let outstanding = 0;
  let closed = false;

  const settle = () => {
    if (outstanding > 0) return;
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };

  const makeVisible = (message: Message) => {
    const list = ready.get(message.queue) ?? [];
    list.push(message);
    ready.set(message.queue, list);
    scheduleFlush(message.queue);
  };

  const makeVisibleAfter = (message: Message, delayMs: number) => {
    outstanding += 1;
    // Without a delay there is no timer: messages sent in one turn of the event loop share a batch
    // even when the clock ticks between them (timers due in different milliseconds may not).
    if (delayMs <= 0) {
      makeVisible(message);
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      makeVisible(message);
    }, delayMs);
    // A pending retry must not keep a process alive that has nothing else to do.
    timer.unref();
    timers.add(timer);
  };

  const scheduleFlush = (queue: QueueName) => {
    if (flushScheduled.has(queue)) return;
    flushScheduled.add(queue);
    // Messages that become visible in the same turn of the event loop travel in one batch.
    setImmediate(() => {
      flushScheduled.delete(queue);
      if (!options.consumers[queue]) return;
      const list = ready.get(queue) ?? [];
      ready.set(queue, []);
      for (let start = 0; start < list.length; start += batchSize) {
        void invoke(queue, list.slice(start, start + batchSize));
      }
    });
  };

  const toRecord = (message: Message): SQSRecord => ({
    messageId: message.messageId,
    receiptHandle: randomBytes(24).toString('base64'),
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: 'LOCAL',
      ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
    },
    messageAttributes: {},
    md5OfBody: message.md5,
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${region}:000000000000:${message.queue}`,
    awsRegion: region,
  });

  const invoke = async (queue: QueueName, batch: Message[]) => {
    if (closed) return;
    const now = Date.now();
    for (const message of batch) {
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
    }
    const ids = new Set(batch.map((message) => message.messageId));
    let failed: Set<string>;
    try {
      const consumer = options.consumers[queue] as QueueConsumer;
      const response = await consumer({ Records: batch.map(toRecord) });
      const reported = response?.batchItemFailures ?? [];
      // As Lambda does: an identifier that names no record of the batch fails the whole batch.
      failed = reported.every((failure) => ids.has(failure.itemIdentifier))
        ? new Set(reported.map((failure) => failure.itemIdentifier))
        : ids;
    } catch (error) {
      logger.error('local queue consumer failed; the whole batch will be retried', {
        queue,
        error: error as Error,
      });
      failed = ids;
    }
    if (closed) return;
    for (const message of batch) {
      if (!failed.has(message.messageId)) {
        options.onSettled?.({ queue, messageId: message.messageId }, 'delivered');
        continue;
      }
      if (message.receiveCount >= maxReceiveCount) {
        options.onSettled?.({ queue, messageId: message.messageId }, 'dead');
        deadLetters.push({
          queue,
          messageId: message.messageId,
          body: message.body,
          receiveCount: message.receiveCount,
        });
        logger.warn('local queue moved a message to the dead-letter list', {
          queue,
          messageId: message.messageId,
          receiveCount: message.receiveCount,
        });
      } else {
        makeVisibleAfter(message, visibilityTimeoutMs);
      }
    }
    outstanding -= batch.length;
    settle();
  };

  const accept = (queue: QueueName, messageId: string, text: string, delay = 0, receiveCount = 0) => {
    const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(0, delay));
    makeVisibleAfter(
      {
        queue,
        messageId,
        body: text,
        md5: createHash('md5').update(text).digest('hex'),
        sentAt: Date.now(),
        receiveCount,
      },
      delaySeconds * 1000,
    );
  };

  return {
    deadLetters,
    async send(queue, body, sendOptions = {}) {
      if (!options.consumers[queue] && !options.holdUntilConnected)
        throw new Error(`The local queue has no consumer for ${queue}`);
      accept(queue, randomUUID(), JSON.stringify(body), sendOptions.delaySeconds);
    },
    sendAs(queue, messageId, body, sendOptions = {}) {
      accept(queue, messageId, body, sendOptions.delaySeconds, sendOptions.receiveCount);
    },
    drain() {
      if (outstanding === 0) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
    connect(queue, consumer) {
      options.consumers[queue] = consumer;
      scheduleFlush(queue);
    },
    close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      outstanding = 0;
      settle();
    },
  };
}
