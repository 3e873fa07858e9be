import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
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
import { clock } from '#lib/wiring';
import { keyManagement } from '#lib/wiring-keys';
import { messageQueue } from '#lib/wiring-queue';

/**
 * The consumer of the webhook delivery queue: one attempt per record, and a partial batch response so
 * that only the records that must run again are redelivered. A record whose body is not a delivery
 * message fails every time and ends in the dead-letter queue, where an operator can see it.
 */
export function webhookDeliveryHandler(overrides: Partial<DeliveryDeps> = {}) {
  let deps: DeliveryDeps | undefined;
  const dependencies = (): DeliveryDeps => {
    deps ??= {
      queue: messageQueue(),
      keys: keyManagement(),
      clock,
      allowPrivateTargets: config.allowPrivateWebhookTargets,
      retryDelaysSeconds: DEFAULT_RETRY_DELAYS_SECONDS,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
      claimLeaseMs: CLAIM_LEASE_MS,
      lookup: dnsLookup,
      ...overrides,
    };
    return deps;
  };
  const deliverRecord = async (record: SQSRecord) => {
    await processDeliveryMessage(DeliveryMessage.parse(JSON.parse(record.body)), dependencies());
  };
  return (event: SQSEvent): Promise<SQSBatchResponse> => processPartialBatch(event, deliverRecord);
}

export const handler = webhookDeliveryHandler();
