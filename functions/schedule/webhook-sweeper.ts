import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import { wirePorts } from '#lib/app/ports';
import { queue } from '#lib/app/queue';
import { requestContext } from '#lib/kernel/context';
import { requeueUnqueued } from '#lib/webhooks/outbound/events';

const ports = wirePorts({ queue });

/**
 * Every minute (EventBridge): queues the outbound webhook deliveries whose sender stopped between
 * writing them and queueing their first message (lib/webhooks/outbound/events).
 */
export async function handler(event?: ScheduledEvent): Promise<{ queued: number }> {
  const ctx = requestContext({ ports, traceId: event?.id ?? randomUUID() });
  return { queued: await requeueUnqueued(ctx) };
}
