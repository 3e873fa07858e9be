import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#lib/logger';

/**
 * Runs `handleRecord` for every record of an SQS batch and answers Lambda's partial batch response
 * (the function's event source mapping needs `functionResponseType: ReportBatchItemFailures`): only
 * the records whose handler threw are delivered again, the others are deleted from the queue.
 *
 * The same contract as Powertools' `processPartialResponse` for SQS, in a few lines, so that no
 * dependency is added for it. Records run concurrently: a batch's records are independent messages.
 *
 * @example
 * export const handler = (event: SQSEvent) => processPartialBatch(event, async (record) => work(record.body));
 */
export async function processPartialBatch(
  event: SQSEvent,
  handleRecord: (record: SQSRecord) => Promise<void>,
): Promise<SQSBatchResponse> {
  const outcomes = await Promise.allSettled(event.Records.map((record) => handleRecord(record)));
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome.status === 'fulfilled') continue;
    const record = event.Records[index] as SQSRecord;
    logger.warn('queue record failed; it will be delivered again', {
      messageId: record.messageId,
      receiveCount: record.attributes.ApproximateReceiveCount,
      error: outcome.reason as Error,
    });
    batchItemFailures.push({ itemIdentifier: record.messageId });
  }
  return { batchItemFailures };
}
