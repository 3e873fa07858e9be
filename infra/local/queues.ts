import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SQSEvent } from 'aws-lambda';
import { type QueueConsumerDefinition, readServerlessQueueConsumers } from '#infra/local/serverless-routes';
import { localQueue } from '#lib/adapters/local/durable-queue';
import type { QueueConsumer } from '#lib/adapters/local/memory-queue';
import type { QueueName } from '#lib/kernel/ports';

/**
 * The local stand-in for SQS event source mappings: each `sqs` event of serverless.yml connects its
 * function to the process's in-process queue, so a message sent under `npm start` reaches the same
 * handler Lambda runs. The handler module is imported at its first message.
 */
export function connectLocalQueues(serverlessFile?: string): QueueConsumerDefinition[] {
  const consumers = readServerlessQueueConsumers(serverlessFile);
  for (const definition of consumers) {
    let handler: QueueConsumer | undefined;
    localQueue().connect(definition.queue as QueueName, async (event: SQSEvent) => {
      if (!handler) {
        const module = await import(pathToFileURL(resolve(`${definition.fn.module}.ts`)).href);
        handler = module[definition.fn.exportName] as QueueConsumer;
      }
      return handler(event);
    });
  }
  return consumers;
}
