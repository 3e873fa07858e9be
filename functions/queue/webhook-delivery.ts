import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { keys } from '#lib/app/keys';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { queue } from '#lib/app/queue';
import { config } from '#lib/config';
import { requestContext } from '#lib/kernel/context';
import { processPartialBatch } from '#lib/queue/partial-batch';
import {
  ATTEMPT_TIMEOUT_MS,
  CLAIM_LEASE_MS,
  DEFAULT_RETRY_DELAYS_SECONDS,
  type DeliveryPolicy,
  endUnprocessed,
  processDeliveryMessage,
} from '#lib/webhooks/outbound/delivery-attempts';
import { DeliveryMessage } from '#lib/webhooks/outbound/delivery-records';
import { dnsLookup } from '#lib/webhooks/outbound/targets';

/**
 * The consumer of the webhook delivery queue: one attempt per record, and a partial batch response so
 * that only the records that must run again are redelivered. A record whose body is not a delivery
 * message, or that names a delivery that does not exist, fails every time and ends in the dead-letter
 * queue, where an operator can see it; one whose processing fails on its last receive (the key service or
 * the table out all along) goes there too, and its delivery is ended as failed, saying it was not sent.
 * Tests pass their own ports (a queue with short delays) and policy.
 */
export function webhookDeliveryHandler(options: { ports?: PortSpec } & Partial<DeliveryPolicy> = {}) {
  const { ports: spec, ...overrides } = options;
  const ports = wirePorts({ queue, keys, ...spec });
  const policy: DeliveryPolicy = {
    allowPrivateTargets: config.allowPrivateWebhookTargets,
    retryDelaysSeconds: DEFAULT_RETRY_DELAYS_SECONDS,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    claimLeaseMs: CLAIM_LEASE_MS,
    lookup: dnsLookup,
    ...overrides,
  };
  const deliverRecord = async (record: SQSRecord) => {
    const ctx = requestContext({ ports, traceId: record.messageId });
    await processDeliveryMessage(ctx, DeliveryMessage.parse(JSON.parse(record.body)), policy);
  };
  const endRecord = async (record: SQSRecord, error: unknown) => {
    const message = DeliveryMessage.safeParse(parseJson(record.body));
    if (!message.success) return;
    await endUnprocessed(requestContext({ ports, traceId: record.messageId }), message.data, error);
  };
  return (event: SQSEvent): Promise<SQSBatchResponse> =>
    processPartialBatch(event, deliverRecord, { onLastReceive: endRecord });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const handler = webhookDeliveryHandler();
