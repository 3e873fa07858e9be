import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
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
 * the stage queues its own next attempt. A body that is not a stage message, or one naming a stage that
 * does not exist, fails every time and ends in the dead-letter queue. Tests pass their own ports
 * (runner, queue) and policy (short delays).
 */
/** Time an invocation keeps, after its runs, for the writes that end them. */
const FINISH_MARGIN_MS = 30_000;

export function pipelineStageHandler(options: { ports?: PortSpec } & StagePolicy = {}) {
  const { ports: spec, ...policy } = options;
  const ports = wirePorts({ queue, keys, runner, ...spec });
  const runRecord = async (record: SQSRecord, deadline: number | undefined) => {
    const ctx = requestContext({ ports, traceId: record.messageId });
    const message = StageMessage.parse(JSON.parse(record.body));
    const redelivered = Number(record.attributes.ApproximateReceiveCount) > 1;
    const outcome = await processStageMessage(ctx, message, { deadline, ...policy }, redelivered);
    logger.info('pipeline stage', { ...message, outcome });
  };
  return (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    // Lambda's own limit: a run still going then is cut short and retried rather than killed with it.
    const deadline = context ? Date.now() + context.getRemainingTimeInMillis() - FINISH_MARGIN_MS : undefined;
    return processPartialBatch(event, (record) => runRecord(record, deadline));
  };
}

export const handler = pipelineStageHandler();
