import { createHash } from 'node:crypto';
import type { CheckoutSessionItem } from '#lib/billing/billing-keys';
import { getCheckoutSession } from '#lib/billing/billing-records';
import { findPackage, findTier } from '#lib/billing/catalogue';
import { receivePaymentsWebhook } from '#lib/billing/payments-webhook';
import { NotFoundError } from '#lib/errors';
import { epochSeconds } from '#lib/identity/keys';
import type { RequestContext } from '#lib/kernel/context';
import type { WebhookReceipt } from '#lib/webhooks/inbound/receipts';

/**
 * The local stand-in for Stripe's hosted checkout (local provider only). The page shows what is being
 * bought; confirming sends a `checkout.session.completed` event, signed with the webhook secret by the
 * stripe library's own test-signature helper, through the same code as a real webhook delivery.
 */

type LocalSession = CheckoutSessionItem & { provider: 'local' };

async function localSession(sessionId: string): Promise<LocalSession> {
  const item = await getCheckoutSession(sessionId);
  if (item?.provider !== 'local') throw new NotFoundError('Checkout session not found');
  return item as LocalSession;
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function describe(session: LocalSession): { label: string; amountCents: number } {
  if (session.kind === 'tier') {
    const tier = findTier(session.tier ?? '');
    return {
      label: `${tier?.name ?? session.tier} plan (monthly)`,
      amountCents: tier?.price_monthly_cents ?? 0,
    };
  }
  const tokenPackage = findPackage(session.package ?? '');
  return {
    label: `${tokenPackage?.name ?? session.package} token package (${tokenPackage?.tokens ?? 0} tokens)`,
    amountCents: tokenPackage?.price_cents ?? 0,
  };
}

const page = (title: string, body: string): string =>
  [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>`,
    `<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
  ].join('');

export async function localCheckoutPage(sessionId: string): Promise<string> {
  const session = await localSession(sessionId);
  const { label, amountCents } = describe(session);
  // The form posts to `<id>/confirm` relative to this page, whatever prefix (/api or /api/v1) served it.
  return page(
    'Local checkout',
    [
      `<p>${escapeHtml(label)}: $${(amountCents / 100).toFixed(2)}</p>`,
      '<p>No money moves: this page stands in for the payment provider in local mode.</p>',
      `<form method="post" action="${escapeHtml(session.id)}/confirm">`,
      '<button type="submit">Confirm payment</button></form>',
    ].join(''),
  );
}

const shortHash = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 16);

export async function confirmLocalCheckout(
  ctx: RequestContext,
  sessionId: string,
): Promise<{ html: string; receipt: WebhookReceipt }> {
  const session = await localSession(sessionId);
  const { label, amountCents } = describe(session);
  const now = ctx.ports.clock.now();
  // The customer the local provider keeps for the organization, as Stripe's checkout reports its own.
  const { customerId } = await ctx.ports.payments.createCustomer({ orgId: session.org_id, name: session.org_id });
  const event = {
    // One event per session: confirming twice is a redelivery, processed once.
    id: `evt_local_${session.id}`,
    object: 'event',
    type: 'checkout.session.completed',
    created: epochSeconds(now),
    livemode: false,
    data: {
      object: {
        id: session.id,
        object: 'checkout.session',
        mode: session.kind === 'tier' ? 'subscription' : 'payment',
        status: 'complete',
        payment_status: 'paid',
        amount_total: amountCents,
        currency: 'usd',
        client_reference_id: session.org_id,
        customer: customerId,
        subscription: session.kind === 'tier' ? `sub_local_${shortHash(`${session.org_id}|${session.id}`)}` : null,
        metadata:
          session.kind === 'tier'
            ? { org_id: session.org_id, kind: 'tier', tier: session.tier }
            : { org_id: session.org_id, kind: 'package', package: session.package },
      },
    },
  };
  const payload = JSON.stringify(event);
  // Local mode only: the stripe library is loaded here, never by a deployed cold start.
  const { default: Stripe } = await import('stripe');
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: ctx.ports.secrets.paymentsWebhookSecret,
    timestamp: epochSeconds(now),
  });
  const receipt = await receivePaymentsWebhook(ctx, { rawBody: payload, signature });
  const outcome = receipt.duplicate ? 'This checkout was already confirmed.' : `Paid: ${label}.`;
  return {
    receipt,
    html: page(
      'Payment confirmed',
      `<p>${escapeHtml(outcome)}</p><p><a href="${escapeHtml(session.success_url)}">Continue</a></p>`,
    ),
  };
}
