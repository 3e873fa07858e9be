import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { OrphanMessageError } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { MAX_RECEIVES } from '#lib/queue/partial-batch';
import { APP_VERSION } from '#lib/version';
import {
  claimAttempt,
  type DeliveryAttempt,
  type DeliveryItem,
  type DeliveryMessage,
  getDeliveryItem,
  markQueued,
  recordAttempt,
  recordUnsent,
} from '#lib/webhooks/outbound/delivery-records';
import { signatureHeader } from '#lib/webhooks/outbound/signing';
import { type HostLookup, hostOf, pinnedLookup, TargetRefusedError, vetTarget } from '#lib/webhooks/outbound/targets';
import { ensureSigningSecret } from '#lib/webhooks/outbound/tenant-config';

/**
 * One delivery attempt per queue message. The message names the delivery and the attempt number; the
 * attempt is claimed, sent, recorded, and, when it failed and attempts remain, the next one is queued
 * with a longer delay. A message that arrives again (SQS delivers at least once, and a failed record is
 * redelivered) finds its attempt claimed or recorded and does not send it again.
 */

/**
 * Delays before attempts 2 to 6: six attempts over about 28 minutes. The last delay is SQS's maximum
 * (15 minutes), so the schedule needs no other timer service.
 */
export const DEFAULT_RETRY_DELAYS_SECONDS: readonly number[] = [5, 30, 120, 600, 900];

/** A receiver gets this long to answer (response headers) before the attempt counts as failed. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * How long a consumer holds an attempt: longer than one attempt can take (timeout, DNS, writes) and the
 * function's timeout (60 s), shorter than the queue's visibility timeout (360 s).
 */
export const CLAIM_LEASE_MS = 90_000;

/**
 * The deployment's delivery policy. The ports (queue, keys, clock) come from the context; these are
 * settings, which tests shorten.
 */
export interface DeliveryPolicy {
  /** Whether targets in private, loopback and other non-public ranges (and plain http) are allowed. */
  allowPrivateTargets: boolean;
  /** Delay before each retry; attempts in total = its length + 1. */
  retryDelaysSeconds: readonly number[];
  timeoutMs: number;
  claimLeaseMs: number;
  lookup: HostLookup;
}

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'skipped';

/** Thrown while another consumer holds the attempt: the message is retried after its visibility timeout. */
export class AttemptInProgressError extends Error {
  constructor(id: string, attempt: number) {
    super(`Attempt ${attempt} of delivery ${id} is held by another consumer`);
    this.name = 'AttemptInProgressError';
  }
}

/** Processes one queue message. Throws only when the message should be delivered again. */
export async function processDeliveryMessage(
  ctx: RequestContext,
  message: DeliveryMessage,
  policy: DeliveryPolicy,
): Promise<AttemptOutcome> {
  const { org_id: orgId, delivery_id: id, attempt } = message;
  const item = await getDeliveryItem(orgId, id);
  // Deliveries are written before their first message and kept longer than any message lives.
  if (!item) throw new OrphanMessageError(`Webhook delivery ${id} does not exist`);
  if (item.status !== 'pending' || item.attempt_count > attempt) return 'skipped';
  if (item.attempt_count === attempt) {
    // This attempt is recorded: the message is a redelivery. If whoever recorded it stopped before
    // queueing the next attempt, queue it now, so that the delivery cannot stall as pending.
    if ((item.queued_attempt ?? 0) <= attempt) {
      const dueIn = item.next_attempt_at ? Date.parse(item.next_attempt_at) - ctx.ports.clock.now().getTime() : 0;
      await queueNextAttempt(ctx, item, attempt, Math.max(0, dueIn / 1000));
    }
    return 'skipped';
  }
  if (item.attempt_count < attempt - 1) {
    logger.warn('webhook attempt message ahead of the log; message dropped', {
      orgId,
      deliveryId: id,
      attempt,
      recorded: item.attempt_count,
    });
    return 'skipped';
  }
  // Read before the claim: should the key service fail, the message is simply retried, and neither an
  // attempt of the tenant's budget nor a claim is spent on the service's own outage.
  const secret = await ensureSigningSecret(ctx, orgId, 'system');
  if (!(await claimAttempt({ orgId, id, attempt, now: ctx.ports.clock.now(), leaseMs: policy.claimLeaseMs }))) {
    const current = await getDeliveryItem(orgId, id);
    if (current && current.status === 'pending' && current.attempt_count < attempt) {
      throw new AttemptInProgressError(id, attempt);
    }
    return 'skipped';
  }

  const result = await attemptOnce(ctx, item, secret, policy);
  const succeeded = result.status_code !== null && result.status_code >= 200 && result.status_code < 300;
  const maxAttempts = policy.retryDelaysSeconds.length + 1;
  const retry = !succeeded && attempt < maxAttempts;
  const delaySeconds = policy.retryDelaysSeconds[attempt - 1] ?? 0;
  const recorded = await recordAttempt({
    orgId,
    id,
    attempt,
    result,
    status: succeeded ? 'succeeded' : retry ? 'pending' : 'failed',
    nextAttemptAt: retry ? new Date(ctx.ports.clock.now().getTime() + delaySeconds * 1000).toISOString() : null,
    now: ctx.ports.clock.now(),
  });
  const outcome: AttemptOutcome = succeeded ? 'succeeded' : retry ? 'retrying' : 'failed';
  logger.info('webhook attempt', {
    orgId,
    deliveryId: id,
    eventType: item.event_type,
    // The host only: a URL's path or query may carry the receiver's own token.
    host: safeHost(item.url),
    attempt,
    statusCode: result.status_code,
    durationMs: result.duration_ms,
    error: result.error,
    outcome: recorded ? outcome : 'recorded by another consumer',
  });
  if (!recorded) return 'skipped';
  if (retry) await queueNextAttempt(ctx, item, attempt, delaySeconds);
  return outcome;
}

/**
 * What the log of a delivery ended by `endUnprocessed` says: the cause is the service's own (a key
 * service or table outage) and stays in the service's logs, not in the tenant's.
 */
export const UNPROCESSED_ERROR =
  `not sent: the service could not process this delivery in ${MAX_RECEIVES} tries; ` +
  'its message was set aside for an operator';

/**
 * A message whose processing failed on its last receive goes to the dead-letter queue, and nothing would
 * ever send its attempt: the delivery is ended as failed, saying it was not sent, rather than left
 * pending for ever. Not while another consumer holds the attempt (it records it), nor once the delivery
 * has moved on. Whether it was ended.
 */
export async function endUnprocessed(ctx: RequestContext, message: DeliveryMessage, error: unknown): Promise<boolean> {
  if (error instanceof AttemptInProgressError) return false;
  const item = await getDeliveryItem(message.org_id, message.delivery_id);
  if (item?.status !== 'pending') return false;
  const ended = await recordUnsent({
    orgId: item.org_id,
    id: item.id,
    attemptCount: item.attempt_count,
    now: ctx.ports.clock.now(),
    error: UNPROCESSED_ERROR,
  });
  if (ended) logger.warn('webhook delivery ended unsent', { orgId: item.org_id, deliveryId: item.id, error });
  return ended;
}

async function queueNextAttempt(
  ctx: RequestContext,
  item: DeliveryItem,
  attempt: number,
  delaySeconds: number,
): Promise<void> {
  const next: DeliveryMessage = { org_id: item.org_id, delivery_id: item.id, attempt: attempt + 1 };
  await ctx.ports.queue.send('webhook-delivery', next, { delaySeconds });
  await markQueued(item.org_id, item.id, attempt + 1);
}

const safeHost = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
};

/**
 * Sends the delivery's body once, signed with the organization's current secret, to the address that
 * passed the target checks. Never throws: every failure becomes the attempt's `error`.
 */
async function attemptOnce(
  ctx: RequestContext,
  item: DeliveryItem,
  secret: string,
  policy: DeliveryPolicy,
): Promise<DeliveryAttempt> {
  const at = ctx.ports.clock.now();
  const started = performance.now();
  const finish = (status_code: number | null, error: string | null): DeliveryAttempt => ({
    at: at.toISOString(),
    status_code,
    duration_ms: Math.round(performance.now() - started),
    error,
  });
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  try {
    const url = new URL(item.url);
    const target = await withDeadline(
      vetTarget(url, { allowPrivateTargets: policy.allowPrivateTargets, lookup: policy.lookup }),
      deadline,
    );
    const timestamp = Math.floor(ctx.ports.clock.now().getTime() / 1000);
    const status = await post(
      url,
      target,
      {
        'content-type': 'application/json',
        'user-agent': `AgentOperationsService-Webhooks/${APP_VERSION}`,
        'webhook-id': item.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secret, item.id, timestamp, item.payload),
      },
      item.payload,
      deadline,
    );
    return finish(status, status >= 200 && status < 300 ? null : `unexpected status ${status}`);
  } catch (error) {
    // Past the deadline, whatever broke (the lookup, the connection) broke because time ran out.
    if (deadline.aborted) return finish(null, `no response within ${policy.timeoutMs} ms`);
    return finish(null, describe(error));
  }
}

function describe(error: unknown): string {
  if (error instanceof TargetRefusedError) return error.message;
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, 500);
}

function withDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * POSTs `body` and resolves with the response status once its headers arrive (the body is read and
 * discarded). The connection goes to `target`, the address that was checked: the lookup hook hands it
 * to the socket instead of resolving the name again, while TLS still verifies the certificate against
 * the host name. Redirects are not followed: a 3xx is a failed attempt.
 */
function post(
  url: URL,
  target: { address: string; family: 4 | 6 },
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<number> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const request = send(
      {
        method: 'POST',
        hostname: hostOf(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: pinnedLookup(target) as never,
        // One connection per attempt: no pooled socket may outlive the address check.
        agent: false,
        signal,
      },
      (response) => {
        resolve(response.statusCode ?? 0);
        response.on('error', () => undefined);
        response.resume();
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
