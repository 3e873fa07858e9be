import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { MessageQueue, QueueName } from '#lib/kernel/ports';

/** SQS refuses a DelaySeconds above 15 minutes. */
export const MAX_DELAY_SECONDS = 900;

/** The variable that configures each queue's URL, named when it is missing. */
const QUEUE_URL_VARIABLES: Record<QueueName, string> = {
  'webhook-delivery': 'WEBHOOK_QUEUE_URL',
  'pipeline-stage': 'PIPELINE_QUEUE_URL',
  'discovery-run': 'DISCOVERY_QUEUE_URL',
};

/**
 * The AWS queue adapter: one SendMessage per message, the body as JSON. A queue without a URL fails at
 * the first send with the variable to set, so that a function deployed without it says why.
 */
export function sqsQueue(client: SQSClient, urls: Partial<Record<QueueName, string>>): MessageQueue {
  return {
    async send(queue, body, options = {}) {
      const url = urls[queue];
      if (!url) throw new Error(`No queue URL is configured for ${queue} (${QUEUE_URL_VARIABLES[queue]})`);
      const delay = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(options.delaySeconds ?? 0)));
      await client.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: JSON.stringify(body),
          ...(delay > 0 ? { DelaySeconds: delay } : {}),
        }),
      );
    },
  };
}

export const sqsClient = (region: string) => new SQSClient({ region });
