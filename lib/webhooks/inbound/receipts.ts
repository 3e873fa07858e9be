import { getMany } from '#lib/db/batch';
import { itemIsNew, type TransactItem, transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { epochSeconds } from '#lib/identity/keys';
import { redact } from '#lib/webhooks/inbound/redaction';
import {
  EVENT_TTL_SECONDS,
  SEEN_TTL_SECONDS,
  type WebhookSource,
  webhookKeys,
} from '#lib/webhooks/inbound/webhook-keys';

/**
 * Records an accepted webhook exactly once. One transaction holds the "seen" guard of each id, the
 * redacted payload and every record the event creates: a second delivery of the same id fails the
 * guard's condition and changes nothing, and a crash before the commit leaves no guard behind, so the
 * provider's retry is processed in full. Nothing is half done either way.
 */

/** Payloads above this are stored as a note of their size: an item may not exceed 400 KB. */
const MAX_STORED_PAYLOAD_BYTES = 256 * 1024;

export interface Delivery {
  source: WebhookSource;
  orgId: string;
  /** The delivery or event id; the first guard, and part of the stored payload's key. */
  eventId: string;
  /** Further ids that must not repeat either (the git body digest: the delivery header is not signed). */
  alsoOnce?: string[];
  event: string;
  payload: unknown;
  now: Date;
  /** The records the event creates or changes, written in the same transaction. */
  writes: TransactItem[];
}

/** How many items `recordDeliveryOnce` adds to the delivery's writes (a guard per id, the stored payload). */
export const deliveryItemCount = (delivery: Pick<Delivery, 'alsoOnce'>): number => 2 + (delivery.alsoOnce?.length ?? 0);

/**
 * Whether any of the ids was seen before: a cheap look before work that a duplicate would waste (the
 * git webhook's execution id and stage items). Only `recordDeliveryOnce`'s guards decide, since two
 * deliveries may both look before either is recorded.
 */
export async function seenBefore(source: WebhookSource, orgId: string, ids: string[]): Promise<boolean> {
  const found = await getMany(ids.map((id) => webhookKeys.seen(source, orgId, id)));
  return found.some((item) => item !== undefined);
}

/** Returns `duplicate` when an id of this delivery was seen before (and then nothing was written). */
export async function recordDeliveryOnce(delivery: Delivery): Promise<'recorded' | 'duplicate'> {
  const at = delivery.now.toISOString();
  const guardIds = [delivery.eventId, ...(delivery.alsoOnce ?? [])];
  const guards: TransactItem[] = guardIds.map((id) => ({
    Put: {
      Item: {
        ...webhookKeys.seen(delivery.source, delivery.orgId, id),
        source: delivery.source,
        org_id: delivery.orgId,
        event_id: delivery.eventId,
        seen_at: at,
        expires_at: epochSeconds(delivery.now) + SEEN_TTL_SECONDS,
      },
      ConditionExpression: itemIsNew,
    },
    reason: 'seen',
  }));
  const stored: TransactItem = {
    Put: {
      Item: {
        ...webhookKeys.event(delivery.orgId, delivery.source, at, delivery.eventId),
        source: delivery.source,
        event: delivery.event,
        event_id: delivery.eventId,
        received_at: at,
        ...storablePayload(delivery.payload),
        expires_at: epochSeconds(delivery.now) + EVENT_TTL_SECONDS,
      },
    },
  };
  try {
    await transact([...guards, stored, ...delivery.writes]);
    return 'recorded';
  } catch (error) {
    if (isConditionFailed(error, 'seen')) return 'duplicate';
    throw error;
  }
}

/** DynamoDB refuses an empty attribute name anywhere in an item; JSON allows `""` as a key. */
const EMPTY_KEY = '[EMPTY_KEY]';

function withNamedKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(withNamedKeys);
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [key === '' ? EMPTY_KEY : key, withNamedKeys(inner)]),
  );
}

function storablePayload(payload: unknown): Record<string, unknown> {
  const redacted = withNamedKeys(redact(payload));
  const bytes = Buffer.byteLength(JSON.stringify(redacted) ?? '', 'utf8');
  return bytes <= MAX_STORED_PAYLOAD_BYTES
    ? { payload: redacted }
    : {
        payload: null,
        payload_omitted: `larger than ${MAX_STORED_PAYLOAD_BYTES} bytes`,
        payload_bytes: bytes,
      };
}

/** One thing the service did (or chose not to do) with a webhook, as the response describes it. */
export interface WebhookAction {
  type: string;
  id?: string;
  status?: string;
  detail?: string;
}

/** The body of every inbound webhook's 200. */
export interface WebhookReceipt {
  received: true;
  event: string;
  duplicate: boolean;
  actions: WebhookAction[];
}

export const receipt = (event: string, actions: WebhookAction[], duplicate = false): WebhookReceipt => ({
  received: true,
  event,
  duplicate,
  actions: duplicate ? [] : actions,
});
