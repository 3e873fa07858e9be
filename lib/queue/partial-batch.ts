import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#lib/logger';

/**
 * How many times a queue hands a message to its consumer before moving it to the dead-letter queue: the
 * redrive policy's `maxReceiveCount` of every queue (infra/aws/queues.yml, infra/aws/discovery.yml; a
 * unit test holds them to it) and the local queue's.
 */
export const MAX_RECEIVES = 5;

/** Whether this receive of the record is its last: should it fail, the queue dead-letters it. */
export const isLastReceive = (record: SQSRecord): boolean =>
  Number(record.attributes.ApproximateReceiveCount) >= MAX_RECEIVES;

export interface PartialBatchOptions {
  /**
   * Told when a record's processing failed on its last receive, before it goes to the dead-letter
   * queue: a consumer whose records stand for something the user sees (a delivery, say) ends it there,
   * saying why, rather than leave it pending for ever. A failure of its own is logged; the record is
   * reported failed either way, so that the dead-letter queue keeps it for an operator.
   */
  onLastReceive?: (record: SQSRecord, error: unknown) => Promise<void>;
}

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
  options: PartialBatchOptions = {},
): Promise<SQSBatchResponse> {
  const outcomes = await Promise.allSettled(event.Records.map((record) => handleRecord(record)));
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome.status === 'fulfilled') continue;
    const record = event.Records[index] as SQSRecord;
    const last = isLastReceive(record);
    logger.warn(
      last
        ? 'queue record failed its last receive; it goes to the dead-letter queue'
        : 'queue record failed; it will be delivered again',
      {
        messageId: record.messageId,
        receiveCount: record.attributes.ApproximateReceiveCount,
        error: outcome.reason as Error,
      },
    );
    if (last && options.onLastReceive) await settleLastReceive(options.onLastReceive, record, outcome.reason);
    batchItemFailures.push({ itemIdentifier: record.messageId });
  }
  return { batchItemFailures };
}

async function settleLastReceive(
  onLastReceive: NonNullable<PartialBatchOptions['onLastReceive']>,
  record: SQSRecord,
  error: unknown,
): Promise<void> {
  try {
    await onLastReceive(record, error);
  } catch (failure) {
    logger.error('a dead-lettered record could not be ended', { messageId: record.messageId, error: failure as Error });
  }
}
