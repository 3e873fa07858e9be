import { email } from '#lib/app/email';
import { localCheckoutEnabled, payments } from '#lib/app/payments';
import * as Billing from '#lib/billing/billing';
import { confirmLocalCheckout, localCheckoutPage } from '#lib/billing/local-checkout';
import { receivePaymentsWebhook } from '#lib/billing/payments-webhook';
import { NotFoundError } from '#lib/errors';
import { groupHandler, type RouteInput, route } from '#lib/http/group-handler';
import { rawResponse } from '#lib/http/results';
import * as routes from '#lib/routes/billing';

const HTML = 'text/html; charset=utf-8';

const webhook = async ({ rawBody, headers, ctx }: RouteInput<typeof routes.billingWebhook>) =>
  receivePaymentsWebhook(ctx, {
    rawBody,
    signature: headers['stripe-signature'],
    secret: ctx.ports.secrets.paymentsWebhookSecret,
  });

const requireLocalCheckout = () => {
  if (!localCheckoutEnabled()) throw new NotFoundError();
};

export const handler = groupHandler(
  'billing',
  [
    route(routes.listTiers, async () => Billing.listTiers()),
    route(routes.getPricing, async () => Billing.pricing()),
    route(routes.billingWebhook, webhook),
    route(routes.paymentsWebhook, webhook),
    route(routes.getSubscription, async ({ ctx }) => Billing.getSubscription(ctx)),
    route(routes.startCheckout, async ({ body, ctx }) =>
      Billing.startCheckout(ctx, ctx.ports.payments, body),
    ),
    route(routes.openPortal, async ({ ctx }) => Billing.openPortal(ctx, ctx.ports.payments)),
    route(routes.createPaymentIntent, async ({ body, ctx }) =>
      Billing.createPaymentIntent(ctx, ctx.ports.payments, body),
    ),
    route(routes.getUsage, async ({ ctx }) => Billing.getUsage(ctx)),
    route(routes.planSummary, async ({ ctx }) => Billing.planSummary(ctx)),
    route(routes.validateDowngrade, async ({ body, ctx }) => Billing.validateDowngrade(ctx, body)),
    route(routes.changePlan, async ({ body, ctx }) => Billing.changePlan(ctx, ctx.ports.payments, body)),
    route(routes.billingOverview, async ({ ctx }) => Billing.overview(ctx)),
    route(routes.getAutoTopup, async ({ ctx }) => Billing.getAutoTopup(ctx)),
    route(routes.postAutoTopup, async ({ body, ctx }) => Billing.setAutoTopup(ctx, body)),
    route(routes.putAutoTopup, async ({ body, ctx }) => Billing.setAutoTopup(ctx, body)),
    route(routes.getCreditAutoTopup, async ({ ctx }) => Billing.getAutoTopup(ctx)),
    route(routes.postCreditAutoTopup, async ({ body, ctx }) => Billing.setAutoTopup(ctx, body)),
    route(routes.putCreditAutoTopup, async ({ body, ctx }) => Billing.setAutoTopup(ctx, body)),
    route(routes.localCheckoutPage, async ({ params }) => {
      requireLocalCheckout();
      return rawResponse({ contentType: HTML, body: await localCheckoutPage(params.sessionId) });
    }),
    route(routes.confirmLocalCheckout, async ({ params, ctx }) => {
      requireLocalCheckout();
      const { html } = await confirmLocalCheckout(
        ctx,
        params.sessionId,
        ctx.ports.secrets.paymentsWebhookSecret,
      );
      return rawResponse({ contentType: HTML, body: html });
    }),
  ],
  { ports: { payments, email } },
);
