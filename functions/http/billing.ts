import { email } from '#lib/app/email';
import { localCheckoutEnabled, payments } from '#lib/app/payments';
import { getAutoTopup, setAutoTopup } from '#lib/billing/auto-topup';
import { openPortal, startCheckout } from '#lib/billing/checkout';
import { confirmLocalCheckout, localCheckoutPage } from '#lib/billing/local-checkout';
import { overview } from '#lib/billing/overview';
import { createPaymentIntent } from '#lib/billing/payment-intents';
import { receivePaymentsWebhook } from '#lib/billing/payments-webhook';
import * as Plans from '#lib/billing/plans';
import { listTiers, pricing } from '#lib/billing/pricing';
import { NotFoundError } from '#lib/errors';
import { type GroupOptions, groupHandler, type RouteInput, route } from '#lib/http/group-handler';
import { rawResponse } from '#lib/http/results';
import * as routes from '#lib/routes/billing';

const HTML = 'text/html; charset=utf-8';

const webhook = async ({ rawBody, headers, ctx }: RouteInput<typeof routes.billingWebhook>) =>
  receivePaymentsWebhook(ctx, { rawBody, signature: headers['stripe-signature'] });

const requireLocalCheckout = () => {
  if (!localCheckoutEnabled()) throw new NotFoundError();
};

/** The billing function; tests pass their own ports (a clock they set, for the signature's time window). */
export function billingHandler(options: GroupOptions = {}) {
  return groupHandler(
    'billing',
    [
      route(routes.listTiers, async () => {
        const tiers = listTiers();
        return { items: tiers, total: tiers.length, limit: tiers.length, offset: 0 };
      }),
      route(routes.getPricing, async () => pricing()),
      route(routes.billingWebhook, webhook),
      route(routes.paymentsWebhook, webhook),
      route(routes.getSubscription, async ({ ctx }) => Plans.getSubscription(ctx)),
      route(routes.startCheckout, async ({ body, ctx }) => startCheckout(ctx, body)),
      route(routes.openPortal, async ({ ctx }) => openPortal(ctx)),
      route(routes.createPaymentIntent, async ({ body, ctx }) => createPaymentIntent(ctx, body)),
      route(routes.getUsage, async ({ ctx }) => Plans.getUsage(ctx)),
      route(routes.planSummary, async ({ ctx }) => Plans.planSummary(ctx)),
      route(routes.validateDowngrade, async ({ body, ctx }) => Plans.validateDowngrade(ctx, body)),
      route(routes.changePlan, async ({ body, ctx }) => Plans.changePlan(ctx, body)),
      route(routes.billingOverview, async ({ ctx }) => overview(ctx)),
      route(routes.getAutoTopup, async ({ ctx }) => getAutoTopup(ctx)),
      route(routes.postAutoTopup, async ({ body, ctx }) => setAutoTopup(ctx, body)),
      route(routes.putAutoTopup, async ({ body, ctx }) => setAutoTopup(ctx, body)),
      route(routes.getCreditAutoTopup, async ({ ctx }) => getAutoTopup(ctx)),
      route(routes.postCreditAutoTopup, async ({ body, ctx }) => setAutoTopup(ctx, body)),
      route(routes.putCreditAutoTopup, async ({ body, ctx }) => setAutoTopup(ctx, body)),
      route(routes.localCheckoutPage, async ({ params }) => {
        requireLocalCheckout();
        return rawResponse({ contentType: HTML, body: await localCheckoutPage(params.sessionId) });
      }),
      route(routes.confirmLocalCheckout, async ({ params, ctx }) => {
        requireLocalCheckout();
        const { html } = await confirmLocalCheckout(ctx, params.sessionId);
        return rawResponse({ contentType: HTML, body: html });
      }),
    ],
    { ...options, ports: { payments, email, ...options.ports } },
  );
}

export const handler = billingHandler();
