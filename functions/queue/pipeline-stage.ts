import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { keys } from '#lib/app/keys';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { queue } from '#lib/app/queue';
import { runner } from '#lib/app/runner';
import { requestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { processStageMessage, StageMessage, type StagePolicy } from '#lib/pipelines/stage-run';
import { processPartialBatch } from '#lib/queue/partial-batch';

/**
 * The consumer of the pipeline stage queue: one stage attempt per record (lib/pipelines/stage-run.ts),
 * the records of a batch side by side, and a partial batch response so that only a record whose
 * processing threw (a table outage, say) is delivered again; a failed run is not a failed record, since
 * the stage queues its own next attempt. A body that is not a stage message fails every time and ends
 * in the dead-letter queue. Tests pass their own ports (runner, queue) and policy (short delays).
 */
export function pipelineStageHandler(options: { ports?: PortSpec } & StagePolicy = {}) {
  const { ports: spec, ...policy } = options;
  const ports = wirePorts({ queue, keys, runner, ...spec });
  const runRecord = async (record: SQSRecord) => {
    const ctx = requestContext({ ports, traceId: record.messageId });
    const message = StageMessage.parse(JSON.parse(record.body));
    const redelivered = Number(record.attributes.ApproximateReceiveCount) > 1;
    const outcome = await processStageMessage(ctx, message, policy, redelivered);
    logger.info('pipeline stage', { ...message, outcome });
  };
  return (event: SQSEvent): Promise<SQSBatchResponse> => processPartialBatch(event, runRecord);
}

export const handler = pipelineStageHandler();
