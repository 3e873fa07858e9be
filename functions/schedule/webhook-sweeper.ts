import type { ScheduledEvent } from 'aws-lambda';
import { requeueUnqueued } from '#lib/webhooks/outbound/events';
import { clock } from '#lib/wiring';
import { messageQueue } from '#lib/wiring-queue';

/**
 * Every minute (EventBridge): queues the outbound webhook deliveries whose sender stopped between
 * writing them and queueing their first message (lib/webhooks/events).
 */
export async function handler(_event?: ScheduledEvent): Promise<{ queued: number }> {
  return { queued: await requeueUnqueued({ queue: messageQueue(), clock }) };
}
