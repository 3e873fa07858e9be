import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { queue } from '#lib/app/queue';
import { requestContext } from '#lib/kernel/context';
import { type ReconcileOptions, type ReconcileReport, reconcileExecutions } from '#lib/pipelines/reconcile';

/**
 * Every minute (EventBridge): drives on the pipeline executions left running by a stage consumer that
 * stopped (a crash, a Lambda timeout, a lost message), so that none stays running forever
 * (lib/pipelines/reconcile.ts). Tests pass their own ports (queue, clock) and options.
 */
export function pipelineReconcilerHandler(options: { ports?: PortSpec } & ReconcileOptions = {}) {
  const { ports: spec, ...reconcile } = options;
  const ports = wirePorts({ queue, ...spec });
  return async (event?: ScheduledEvent): Promise<ReconcileReport> => {
    const ctx = requestContext({ ports, traceId: event?.id ?? randomUUID() });
    return await reconcileExecutions(ctx, reconcile);
  };
}

export const handler = pipelineReconcilerHandler();
