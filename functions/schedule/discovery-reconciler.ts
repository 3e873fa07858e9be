import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { scheduler } from '#lib/app/scheduler';
import { type ReconcileOptions, type ReconcileReport, reconcileDiscovery } from '#lib/discovery/reconcile';
import { requestContext } from '#lib/kernel/context';

/**
 * Every five minutes (EventBridge): puts the schedules of discovery engines left out of sync by a failed
 * scheduler call, and ends the runs whose worker stopped (lib/discovery/reconcile.ts). Tests pass their
 * own ports (scheduler, clock) and options.
 */
export function discoveryReconcilerHandler(options: { ports?: PortSpec } & ReconcileOptions = {}) {
  const { ports: spec, ...reconcile } = options;
  const ports = wirePorts({ scheduler, ...spec });
  return async (event?: ScheduledEvent): Promise<ReconcileReport> => {
    const ctx = requestContext({ ports, traceId: event?.id ?? randomUUID() });
    return await reconcileDiscovery(ctx, reconcile);
  };
}

export const handler = discoveryReconcilerHandler();
