import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { keys } from '#lib/app/keys';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { runner } from '#lib/app/runner';
import { executeRun } from '#lib/discovery/run-execute';
import { requestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { processPartialBatch } from '#lib/queue/partial-batch';

/** One message of the `discovery-run` queue (lib/discovery/run-start.ts `queueRun`). */
const RunMessage = z.object({
  org_id: z.string().min(1).max(64),
  engine_id: z.number().int().positive(),
  run_id: z.number().int().positive(),
});

/**
 * The consumer of the discovery run queue: executes one queued run per record (lib/discovery/
 * run-execute.ts), the records of a batch side by side, with a partial batch response so that only a
 * record whose processing threw (a table outage, say) is delivered again. A failed run is not a failed
 * record: it is ended as failed. The claim is conditional, so a record delivered twice runs the model
 * once; a body that is not a run message, or one naming a run that does not exist, fails every time and
 * ends in the dead-letter queue.
 */
export function discoveryRunConsumer(spec: PortSpec = {}) {
  const ports = wirePorts({ keys, runner, ...spec });
  const runRecord = async (record: SQSRecord) => {
    const message = RunMessage.parse(JSON.parse(record.body));
    const ctx = requestContext({ ports, traceId: record.messageId });
    const outcome = await executeRun(ctx, {
      orgId: message.org_id,
      engineId: message.engine_id,
      runId: message.run_id,
    });
    logger.info('discovery run', { ...message, ...outcome });
  };
  return (event: SQSEvent): Promise<SQSBatchResponse> => processPartialBatch(event, runRecord);
}

export const handler = discoveryRunConsumer();
