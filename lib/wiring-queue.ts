import { sqsClient, sqsQueue } from '#lib/adapters/aws/sqs-queue';
import { memoryQueue } from '#lib/adapters/local/memory-queue';
import type { MessageQueue } from '#lib/adapters/ports';
import { config } from '#lib/config';

/**
 * Queue wiring, apart from lib/wiring.ts so that only the functions that publish messages bundle the
 * SQS client (and need WEBHOOK_QUEUE_URL).
 */
let queue: MessageQueue | undefined;

/**
 * SQS in aws mode; otherwise the in-process queue, whose consumer is the same handler Lambda runs for
 * the webhook delivery queue (imported on first delivery, since that handler publishes through here).
 */
export function messageQueue(): MessageQueue {
  if (!queue) {
    queue =
      config.mode === 'aws'
        ? sqsQueue(sqsClient(config.region), { 'webhook-delivery': config.webhookQueueUrl })
        : memoryQueue({
            consumers: {
              'webhook-delivery': async (event) => {
                const { handler } = await import('#functions/queue/webhook-delivery');
                return handler(event);
              },
            },
          });
  }
  return queue;
}

/**
 * Replaces the queue for this process: tests use an in-process queue whose consumer has short retry
 * delays, so that a whole retry schedule runs in milliseconds.
 */
export function useMessageQueue(replacement: MessageQueue): void {
  queue = replacement;
}
