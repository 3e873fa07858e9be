/**
 * The outbound events a tenant can register a URL for, in the order GET /tenant-config lists them (and
 * in which POST /tenant-config/webhooks/test picks the first registered one). The specification shows
 * task_completed and agent_error; the pipeline events complete the set the service emits.
 */
export const WEBHOOK_EVENTS = ['task_completed', 'agent_error', 'pipeline_completed', 'pipeline_failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What a delivery can carry: a registered event, or `test` from the test endpoint. */
export type OutboundEventType = WebhookEvent | 'test';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Delivery ids: `msg_` and 23 letters or digits (Standard Webhooks' message id style). */
export const DELIVERY_ID_PATTERN = /^msg_[0-9A-Za-z]{23}$/;
