import type Stripe from 'stripe';
import { seenEventGuard } from '#lib/billing/billing-records';
import { planEvent } from '#lib/billing/payment-events';
import { transact } from '#lib/db/transactions';
import { isConditionFailed, UnauthorizedError } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { receipt, type WebhookReceipt } from '#lib/webhooks/inbound/receipts';

/**
 * POST /billing/webhook and POST /webhooks/payments (one implementation): Stripe events, verified with
 * the stripe library against the webhook secret (`ctx.ports.secrets.paymentsWebhookSecret`) with a 300 s
 * tolerance either way. Each event id is processed once: a guard item is put conditionally in the same transaction
 * as every change the event makes (lib/billing/payment-events.ts plans them), so a redelivery changes
 * nothing and a failure before the commit leaves nothing behind for the retry.
 */

export const SIGNATURE_TOLERANCE_SECONDS = 300;

const INVALID_SIGNATURE = 'Invalid webhook signature';

/**
 * Verifies the signature and returns the event, or throws the one generic 401. The stripe library is
 * loaded by the first webhook, not by every cold start of the function that receives them.
 */
export async function verifyPaymentsEvent(
  rawBody: string | undefined,
  header: string | undefined,
  secret: string,
  now: Date,
): Promise<Stripe.Event> {
  if (!rawBody || !header) throw new UnauthorizedError(INVALID_SIGNATURE);
  assertNotFromTheFuture(header, now);
  const { default: StripeLibrary } = await import('stripe');
  try {
    return StripeLibrary.webhooks.constructEvent(
      rawBody,
      header,
      secret,
      SIGNATURE_TOLERANCE_SECONDS,
      undefined,
      now.getTime(),
    );
  } catch (error) {
    // The reason is logged (never the body or the header), the caller only learns that it failed.
    logger.warn('payments webhook verification failed', { reason: (error as Error).message });
    throw new UnauthorizedError(INVALID_SIGNATURE);
  }
}

/**
 * The stripe library refuses a timestamp older than the tolerance but not one in the future; a signed
 * event dated ahead is refused here too, as the other signed routes refuse it.
 */
function assertNotFromTheFuture(header: string, now: Date): void {
  const signedAt = Number(/(?:^|,)\s*t=(\d+)/.exec(header)?.[1]);
  if (Number.isFinite(signedAt) && signedAt > now.getTime() / 1000 + SIGNATURE_TOLERANCE_SECONDS) {
    logger.warn('payments webhook verification failed', { reason: 'timestamp in the future' });
    throw new UnauthorizedError(INVALID_SIGNATURE);
  }
}

export async function receivePaymentsWebhook(
  ctx: RequestContext,
  request: { rawBody: string | undefined; signature: string | undefined },
): Promise<WebhookReceipt> {
  const now = ctx.ports.clock.now();
  const secret = ctx.ports.secrets.paymentsWebhookSecret;
  const event = await verifyPaymentsEvent(request.rawBody, request.signature, secret, now);
  const plan = await planEvent(event, now);
  // Every verified event id is remembered, handled or not, so that a repeat is known as one.
  const guard = seenEventGuard({ eventId: event.id, event: event.type, orgId: plan.orgId, now });
  let duplicate = false;
  try {
    await transact([guard, ...plan.writes]);
  } catch (error) {
    if (!isConditionFailed(error, 'seen')) throw error;
    duplicate = true;
  }
  logger.info(plan.writes.length === 0 ? 'payments webhook acknowledged' : 'payments webhook processed', {
    event: event.type,
    event_id: event.id,
    org_id: plan.orgId,
    duplicate,
    actions: plan.actions.map((action) => action.type),
  });
  if (!duplicate && plan.after) {
    // A notification that fails must not make the provider resend an event already applied.
    await plan
      .after(ctx)
      .catch((error: unknown) => logger.warn('payments webhook follow-up failed', { error: error as Error }));
  }
  return receipt(event.type, plan.actions, duplicate);
}
