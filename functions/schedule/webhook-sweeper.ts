import type { ScheduledEvent } from 'aws-lambda';
import { wirePorts } from '#lib/app/ports';
import { queue } from '#lib/app/queue';
import { requeueUnqueued } from '#lib/webhooks/outbound/events';

const ports = wirePorts({ queue });

/**
 * Every minute (EventBridge): queues the outbound webhook deliveries whose sender stopped between
 * writing them and queueing their first message (lib/webhooks/outbound/events).
 */
export async function handler(_event?: ScheduledEvent): Promise<{ queued: number }> {
  return { queued: await requeueUnqueued({ queue: ports.queue, clock: ports.clock }) };
}
