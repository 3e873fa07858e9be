import { sqsClient, sqsQueue } from '#lib/adapters/aws/sqs-queue';
import { localQueue } from '#lib/adapters/local/durable-queue';
import { config } from '#lib/config';
import type { MessageQueue } from '#lib/kernel/ports';

/**
 * Queues: SQS in aws mode (WEBHOOK_QUEUE_URL, PIPELINE_QUEUE_URL,
 * DISCOVERY_QUEUE_URL); locally the process's in-process
 * queue, its messages kept in the table until consumed (lib/adapters/local/durable-queue.ts), whose
 * consumers the local runtime connects from serverless.yml's `sqs` events (infra/local/queues.ts).
 */
export const queue = (): MessageQueue =>
  config.mode === 'aws'
    ? sqsQueue(sqsClient(config.region), {
        'webhook-delivery': config.webhookQueueUrl,
        'pipeline-stage': config.pipelineQueueUrl,
        'discovery-run': config.discoveryQueueUrl,
      })
    : localQueue();
