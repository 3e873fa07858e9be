import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { keys } from '#lib/app/keys';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { queue } from '#lib/app/queue';
import { config } from '#lib/config';
import { processPartialBatch } from '#lib/queue/partial-batch';
import {
  ATTEMPT_TIMEOUT_MS,
  CLAIM_LEASE_MS,
  DEFAULT_RETRY_DELAYS_SECONDS,
  type DeliveryDeps,
  processDeliveryMessage,
} from '#lib/webhooks/outbound/delivery-attempts';
import { DeliveryMessage } from '#lib/webhooks/outbound/delivery-records';
import { dnsLookup } from '#lib/webhooks/outbound/targets';

type DeliveryPolicy = Omit<DeliveryDeps, 'queue' | 'keys' | 'clock'>;

/**
 * The consumer of the webhook delivery queue: one attempt per record, and a partial batch response so
 * that only the records that must run again are redelivered. A record whose body is not a delivery
 * message fails every time and ends in the dead-letter queue, where an operator can see it. Tests pass
 * their own ports (a queue with short delays) and policy.
 */
export function webhookDeliveryHandler(options: { ports?: PortSpec } & Partial<DeliveryPolicy> = {}) {
  const { ports: spec, ...policy } = options;
  const ports = wirePorts({ queue, keys, ...spec });
  const deliverRecord = async (record: SQSRecord) => {
    await processDeliveryMessage(DeliveryMessage.parse(JSON.parse(record.body)), {
      queue: ports.queue,
      keys: ports.keys,
      clock: ports.clock,
      allowPrivateTargets: config.allowPrivateWebhookTargets,
      retryDelaysSeconds: DEFAULT_RETRY_DELAYS_SECONDS,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
      claimLeaseMs: CLAIM_LEASE_MS,
      lookup: dnsLookup,
      ...policy,
    });
  };
  return (event: SQSEvent): Promise<SQSBatchResponse> => processPartialBatch(event, deliverRecord);
}

export const handler = webhookDeliveryHandler();
