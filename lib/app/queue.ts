import { localQueue } from '#lib/adapters/local/durable-queue';
import { deferred } from '#lib/app/deferred';
import { config } from '#lib/config';
import type { MessageQueue } from '#lib/kernel/ports';

/**
 * Queues: SQS in aws mode (WEBHOOK_QUEUE_URL, PIPELINE_QUEUE_URL,
 * DISCOVERY_QUEUE_URL), its client loaded at the first message; locally the process's in-process
 * queue, its messages kept in the table until consumed (lib/adapters/local/durable-queue.ts), whose
 * consumers the local runtime connects from serverless.yml's `sqs` events (infra/local/queues.ts).
 */
export const queue = (): MessageQueue =>
  config.mode === 'aws'
    ? deferred(
        async () => {
          const { sqsClient, sqsQueue } = await import('#lib/adapters/aws/sqs-queue');
          return sqsQueue(sqsClient(config.region), {
            'webhook-delivery': config.webhookQueueUrl,
            'pipeline-stage': config.pipelineQueueUrl,
            'discovery-run': config.discoveryQueueUrl,
          });
        },
        ['send'],
        {},
      )
    : localQueue();
