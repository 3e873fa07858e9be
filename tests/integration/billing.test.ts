import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { handler as billing } from '#functions/http/billing';
import { secrets } from '#lib/app/secrets';
import { findPackage } from '#lib/billing/catalogue';
import { db, TABLE } from '#lib/db/client';
import { tenantPk } from '#lib/db/keys';
import { identityKeys } from '#lib/identity/keys';

import { context, httpEvent } from '#tests/support/events';
import { call, joinOrganization, newUser, outboxFor, type TestUser } from '#tests/support/identity';
import { assertNoLeaks } from '#tests/support/leak-scan';

const paymentsWebhookSecret = () => secrets.paymentsWebhookSecret;

let eventCounter = 0;
const eventId = () => {
  eventCounter += 1;
  return `evt_test_${Date.now()}_${eventCounter}`;
};

/** A Stripe event body and its signature, made with the stripe library's own test helper. */
function signed(
  event: Record<string, unknown>,
  options: { secret?: string; timestamp?: number } = {},
): { payload: string; header: string } {
  const payload = JSON.stringify({ object: 'event', livemode: false, created: 1, ...event });
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? paymentsWebhookSecret(),
    ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
  });
  return { payload, header };
}

async function postWebhook(path: string, payload: string, header?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (header) headers['stripe-signature'] = header;
  const response = (await billing(
    httpEvent('POST', `/api${path}`, { body: payload, headers }),
    context(),
  )) as APIGatewayProxyStructuredResultV2;
  const body = JSON.parse(response.body ?? 'null');
  assertNoLeaks('POST', path, response.statusCode ?? 200, body);
  return { status: response.statusCode ?? 200, body };
}

async function deliver(event: Record<string, unknown>, path = '/webhooks/payments') {
  const { payload, header } = signed(event);
  return postWebhook(path, payload, header);
}

async function raw(method: string, path: string) {
  const response = (await billing(httpEvent(method, `/api${path}`), context())) as APIGatewayProxyStructuredResultV2;
  return { status: response.statusCode ?? 200, body: response.body ?? '', headers: response.headers ?? {} };
}

const orgItem = async (orgId: string) =>
  (await db.send(new GetCommand({ TableName: TABLE, Key: identityKeys.organization(orgId) }))).Item;

const tokenBalance = async (orgId: string) =>
  Number(
    (await db.send(new GetCommand({ TableName: TABLE, Key: { pk: tenantPk(orgId), sk: 'TOKENS' } }))).Item?.balance ??
      0,
  );

const setTier = (orgId: string, tier: string) =>
  db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: identityKeys.organization(orgId),
      UpdateExpression: 'SET tier = :tier',
      ExpressionAttributeValues: { ':tier': tier },
    }),
  );

/** Gives the organization `extra` more real members (memberships and member_count). */
async function addMembers(owner: TestUser, extra: number): Promise<void> {
  for (let index = 0; index < extra; index += 1) {
    const member = await newUser('member');
    await joinOrganization(member, owner.orgId);
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: identityKeys.organization(owner.orgId),
        UpdateExpression: 'ADD member_count :one',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  }
}

const tierCheckout = (orgId: string, tier: string, id = eventId()) => ({
  id,
  type: 'checkout.session.completed',
  data: {
    object: {
      id: `cs_test_${id}`,
      object: 'checkout.session',
      payment_status: 'paid',
      amount_total: 2900,
      currency: 'usd',
      customer: `cus_${orgId}`,
      subscription: `sub_${orgId}`,
      metadata: { org_id: orgId, kind: 'tier', tier },
    },
  },
});

describe('the public catalogue', () => {
  it('answers the tiers as a list with meta, as every list', async () => {
    const tiers = await call(billing, 'GET', '/billing/tiers');
    expect(tiers.status).toBe(200);
    expect(tiers.body.meta).toEqual({ total: tiers.body.data.length, limit: tiers.body.data.length, offset: 0 });
  });

  it('lists the tiers and the pricing with each package’s price per million tokens', async () => {
    // Act
    const tiers = await call(billing, 'GET', '/billing/tiers');
    const pricing = await call(billing, 'GET', '/billing/pricing');

    // Assess
    expect(tiers.status).toBe(200);
    expect(tiers.body.data.map((tier: { id: string }) => tier.id)).toEqual(['free', 'pro', 'teams', 'enterprise']);
    expect(pricing.status).toBe(200);
    const starter = pricing.body.data.token_packages.find((p: { slug: string }) => p.slug === 'starter');
    expect(starter.price_per_million_tokens_cents).toBe(2000);
  });
});

describe('the payments webhook signature', () => {
  it.each(['/webhooks/payments', '/billing/webhook'])('answers 401 without a Stripe-Signature on %s', async (path) => {
    // Prepare
    const { payload } = signed({ id: eventId(), type: 'ping.unhandled', data: { object: {} } });

    // Act
    const response = await postWebhook(path, payload);

    // Assess
    expect(response.status).toBe(401);
    expect(response.body.error.message).toBe('Invalid webhook signature');
  });

  it('answers 401 when the body was changed after signing', async () => {
    // Prepare
    const user = await newUser();
    const { payload, header } = signed(tierCheckout(user.orgId, 'pro'));

    // Act
    const response = await postWebhook('/webhooks/payments', payload.replace('"pro"', '"teams"'), header);

    // Assess
    expect(response.status).toBe(401);
    expect((await orgItem(user.orgId))?.tier).toBe('free');
  });

  it('answers 401 when the signature was made with another secret', async () => {
    // Prepare
    const { payload, header } = signed({ id: eventId(), type: 'x', data: { object: {} } }, { secret: 'whsec_other' });

    // Act
    const response = await postWebhook('/billing/webhook', payload, header);

    // Assess
    expect(response.status).toBe(401);
  });

  it('answers 401 when the timestamp is older than 300 seconds', async () => {
    // Prepare
    const stale = Math.floor(Date.now() / 1000) - 301;
    const { payload, header } = signed({ id: eventId(), type: 'x', data: { object: {} } }, { timestamp: stale });

    // Act
    const response = await postWebhook('/webhooks/payments', payload, header);

    // Assess
    expect(response.status).toBe(401);
  });

  it('answers 401 when the timestamp is more than 300 seconds in the future', async () => {
    // Prepare
    const ahead = Math.floor(Date.now() / 1000) + 301;
    const { payload, header } = signed({ id: eventId(), type: 'x', data: { object: {} } }, { timestamp: ahead });

    // Act
    const response = await postWebhook('/webhooks/payments', payload, header);

    // Assess
    expect(response.status).toBe(401);
    expect(response.body.error.message).toBe('Invalid webhook signature');
  });

  it('says duplicate: true when a signed event of a type it does not handle comes again', async () => {
    // Prepare
    const event = { id: eventId(), type: 'customer.updated', data: { object: {} } };

    // Act
    const first = await deliver(event);
    const again = await deliver(event, '/billing/webhook');

    // Assess
    expect(first.body.data).toMatchObject({ received: true, event: 'customer.updated', duplicate: false });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ received: true, event: 'customer.updated', duplicate: true });
  });

  it('acknowledges a signed event of a type it does not handle with 200', async () => {
    // Act
    const response = await deliver({ id: eventId(), type: 'customer.created', data: { object: {} } });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ received: true, event: 'customer.created', duplicate: false });
    expect(response.body.data.actions[0].type).toBe('ignored');
  });
});

describe('the payments webhook events', () => {
  it('activates the tier on a completed tier checkout and processes a replayed event id once', async () => {
    // Prepare
    const user = await newUser();
    const event = tierCheckout(user.orgId, 'pro');

    // Act
    const first = await deliver(event);
    const replay = await deliver(event, '/billing/webhook');

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data.duplicate).toBe(false);
    expect(replay.status).toBe(200);
    expect(replay.body.data.duplicate).toBe(true);
    expect((await orgItem(user.orgId))?.tier).toBe('pro');
    const subscription = await call(billing, 'GET', '/billing/subscription', { token: user.token });
    expect(subscription.body.data).toMatchObject({
      tier: 'pro',
      status: 'active',
      customer_id: `cus_${user.orgId}`,
    });
    const overview = await call(billing, 'GET', '/billing/overview', { token: user.token });
    expect(overview.body.data.revenue).toMatchObject({ total_cents: 2900, payments: 1 });
  });

  it('deposits a package’s tokens once on a completed package checkout', async () => {
    // Prepare
    const user = await newUser();
    const before = await tokenBalance(user.orgId);
    const id = eventId();
    const event = {
      id,
      type: 'checkout.session.completed',
      data: {
        object: {
          id: `cs_${id}`,
          payment_status: 'paid',
          amount_total: 5000,
          currency: 'usd',
          metadata: { org_id: user.orgId, kind: 'package', package: 'growth' },
        },
      },
    };

    // Act
    await deliver(event);
    await deliver(event);

    // Assess
    expect((await tokenBalance(user.orgId)) - before).toBe(findPackage('growth')?.tokens);
  });

  it('records a renewal on invoice.paid and flags the account on invoice.payment_failed', async () => {
    // Prepare
    const user = await newUser();
    await deliver(tierCheckout(user.orgId, 'pro'));
    const periodEnd = Math.floor(Date.UTC(2030, 0, 1) / 1000);
    const invoice = (status: string) => ({
      id: eventId(),
      type: status,
      data: {
        object: {
          id: `in_${eventCounter}`,
          customer: `cus_${user.orgId}`,
          amount_paid: 2900,
          amount_due: 2900,
          currency: 'usd',
          parent: { subscription_details: { subscription: `sub_${user.orgId}`, metadata: { tier: 'pro' } } },
          lines: { data: [{ period: { end: periodEnd } }] },
        },
      },
    });

    // Act
    const failed = await deliver(invoice('invoice.payment_failed'));
    const pastDue = await call(billing, 'GET', '/billing/subscription', { token: user.token });
    const paid = await deliver(invoice('invoice.paid'));
    const renewed = await call(billing, 'GET', '/billing/subscription', { token: user.token });

    // Assess
    expect(failed.status).toBe(200);
    expect(pastDue.body.data.status).toBe('past_due');
    expect(outboxFor(user.email).some((message) => message.subject.startsWith('Payment failed'))).toBe(true);
    expect(paid.status).toBe(200);
    expect(renewed.body.data).toMatchObject({
      status: 'active',
      current_period_end: '2030-01-01T00:00:00.000Z',
    });
  });

  it('updates the tier from the price’s lookup key and returns to free when the subscription is deleted', async () => {
    // Prepare
    const user = await newUser();
    await deliver(tierCheckout(user.orgId, 'pro'));
    const subscription = {
      id: `sub_${user.orgId}`,
      customer: `cus_${user.orgId}`,
      status: 'active',
      metadata: {},
      items: { data: [{ price: { lookup_key: 'teams' }, current_period_end: 1_900_000_000 }] },
    };

    // Act
    await deliver({ id: eventId(), type: 'customer.subscription.updated', data: { object: subscription } });
    const updatedTier = (await orgItem(user.orgId))?.tier;
    await deliver({ id: eventId(), type: 'customer.subscription.deleted', data: { object: subscription } });

    // Assess
    expect(updatedTier).toBe('teams');
    expect((await orgItem(user.orgId))?.tier).toBe('free');
    const record = await call(billing, 'GET', '/billing/subscription', { token: user.token });
    expect(record.body.data).toMatchObject({ tier: 'free', status: 'cancelled' });
  });
});

describe('checkout, portal and payment intents through the local provider', () => {
  it('opens the portal for an organization that never subscribed, making its customer once', async () => {
    // Prepare
    const user = await newUser();

    // Act
    const first = await call(billing, 'POST', '/billing/portal', { token: user.token });
    const second = await call(billing, 'POST', '/billing/portal', { token: user.token });
    const subscription = await db.send(
      new GetCommand({ TableName: TABLE, Key: { pk: tenantPk(user.orgId), sk: 'SUBSCRIPTION' } }),
    );

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data.url).toContain('/billing/subscription');
    expect(second.status).toBe(200);
    expect(subscription.Item?.customer_id).toMatch(/^cus_local_/);
  });

  it('answers a checkout session that points at the local checkout page, and 400 for an unknown tier', async () => {
    // Prepare
    const user = await newUser();

    // Act
    const checkout = await call(billing, 'POST', '/billing/checkout', {
      token: user.token,
      body: { tier: 'pro' },
    });
    const unknown = await call(billing, 'POST', '/billing/checkout', {
      token: user.token,
      body: { tier: 'gold' },
    });

    // Assess
    expect(checkout.status).toBe(200);
    expect(checkout.body.data.url).toContain(`/billing/local-checkout/${checkout.body.data.id}`);
    expect(unknown.status).toBe(400);
  });

  it('activates the tier end to end when the local checkout is confirmed', async () => {
    // Prepare
    const user = await newUser();
    const checkout = await call(billing, 'POST', '/billing/checkout', {
      token: user.token,
      body: { tier: 'teams' },
    });
    const sessionId = checkout.body.data.id;
    const noPortal = await call(billing, 'POST', '/billing/portal', { token: user.token });

    // Act
    const page = await raw('GET', `/billing/local-checkout/${sessionId}`);
    const confirmed = await raw('POST', `/billing/local-checkout/${sessionId}/confirm`);
    const again = await raw('POST', `/billing/local-checkout/${sessionId}/confirm`);

    // Assess
    expect(page.status).toBe(200);
    expect(page.body).toContain('<form method="post"');
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toContain('Paid');
    expect(again.body).toContain('already confirmed');
    expect((await orgItem(user.orgId))?.tier).toBe('teams');
    expect(noPortal.status).toBe(200);
    const portal = await call(billing, 'POST', '/billing/portal', { token: user.token });
    expect(portal.status).toBe(200);
    expect(portal.body.data.url).toContain('/billing/subscription');
  });

  it('deposits the package’s tokens end to end when a local package checkout is confirmed', async () => {
    // Prepare
    const user = await newUser();
    const before = await tokenBalance(user.orgId);
    const checkout = await call(billing, 'POST', '/billing/checkout', {
      token: user.token,
      body: { package_slug: 'starter' },
    });

    // Act
    const confirmed = await raw('POST', `/billing/local-checkout/${checkout.body.data.id}/confirm`);

    // Assess
    expect(confirmed.status).toBe(200);
    expect((await tokenBalance(user.orgId)) - before).toBe(findPackage('starter')?.tokens);
  });

  it('answers 404 for a local checkout session that does not exist', async () => {
    // Act
    const response = await raw('GET', '/billing/local-checkout/cs_local_0123456789abcdef');

    // Assess
    expect(response.status).toBe(404);
  });

  it('answers the same payment intent for the same idempotency key', async () => {
    // Prepare
    const user = await newUser();
    const body = { package_slug: 'growth', idempotency_key: 'order-1' };

    // Act
    const first = await call(billing, 'POST', '/billing/create-payment-intent', { token: user.token, body });
    const second = await call(billing, 'POST', '/billing/create-payment-intent', { token: user.token, body });
    const other = await call(billing, 'POST', '/billing/create-payment-intent', {
      token: user.token,
      body: { package_slug: 'growth', idempotency_key: 'order-2' },
    });
    const unknown = await call(billing, 'POST', '/billing/create-payment-intent', {
      token: user.token,
      body: { package_slug: 'huge' },
    });

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ amount: 5000, currency: 'usd', package_slug: 'growth' });
    expect(second.body.data.id).toBe(first.body.data.id);
    expect(other.body.data.id).not.toBe(first.body.data.id);
    expect(unknown.status).toBe(400);
  });
});

describe('plan changes against usage', () => {
  it('refuses a downgrade whose member count exceeds the target’s limit and allows one that fits', async () => {
    // Prepare
    const owner = await newUser();
    await setTier(owner.orgId, 'teams');
    await addMembers(owner, 3); // 4 members: over free (3), under pro (10)

    // Act
    const check = await call(billing, 'POST', '/billing/validate-downgrade', {
      token: owner.token,
      body: { tier: 'free' },
    });
    const fits = await call(billing, 'POST', '/billing/validate-downgrade', {
      token: owner.token,
      body: { tier: 'pro' },
    });
    const refused = await call(billing, 'POST', '/billing/change-plan', {
      token: owner.token,
      body: { tier: 'free' },
    });
    const changed = await call(billing, 'POST', '/billing/change-plan', {
      token: owner.token,
      body: { tier: 'pro' },
    });

    // Assess
    expect(check.body.data).toMatchObject({
      allowed: false,
      violations: [{ resource: 'members', used: 4, limit: 3 }],
    });
    expect(fits.body.data).toMatchObject({ allowed: true, violations: [] });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('UNPROCESSABLE');
    expect(refused.body.error.details).toEqual([{ resource: 'members', used: 4, limit: 3 }]);
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ changed: true, previous_tier: 'teams', tier: 'pro' });
    expect((await orgItem(owner.orgId))?.tier).toBe('pro');
  });

  it('answers a checkout session for an upgrade from free', async () => {
    // Prepare
    const user = await newUser();

    // Act
    const response = await call(billing, 'POST', '/billing/change-plan', {
      token: user.token,
      body: { tier: 'pro' },
    });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      changed: false,
      tier: 'free',
      checkout: { kind: 'tier', tier: 'pro' },
    });
  });

  it('reports usage with members and this month’s consumed tokens, and the plan summary', async () => {
    // Prepare
    const user = await newUser();
    await addMembers(user, 1);
    const at = new Date().toISOString();
    await db.send(
      new PutCommand({
        TableName: TABLE,
        Item: {
          pk: tenantPk(user.orgId),
          sk: `TOKENTX#${at}#abc`,
          type: 'consume',
          amount: -1234,
          created_at: at,
        },
      }),
    );

    // Act
    const usage = await call(billing, 'GET', '/billing/usage', { token: user.token });
    const summary = await call(billing, 'GET', '/billing/plan-summary', { token: user.token });
    const none = await call(billing, 'GET', '/billing/subscription', { token: user.token });

    // Assess
    expect(usage.status).toBe(200);
    expect(usage.body.data).toMatchObject({
      tier: 'free',
      usage: { agents: 0, pipelines: 0, members: 2, tokens_consumed: 1234 },
    });
    expect(summary.body.data.remaining.members).toBe(1);
    expect(none.status).toBe(404);
  });
});

describe('auto top-up settings', () => {
  it('stores the settings under both paths and refuses an unknown package', async () => {
    // Prepare
    const user = await newUser();
    const initial = await call(billing, 'GET', '/billing/auto-topup', { token: user.token });

    // Act
    const set = await call(billing, 'PUT', '/billing/auto-topup', {
      token: user.token,
      body: { enabled: true, threshold: 1000, package_slug: 'starter' },
    });
    const alias = await call(billing, 'GET', '/billing/credit-auto-topup', { token: user.token });
    const unknown = await call(billing, 'POST', '/billing/credit-auto-topup', {
      token: user.token,
      body: { enabled: true, threshold: 1000, package_slug: 'nope' },
    });
    const zero = await call(billing, 'POST', '/billing/auto-topup', {
      token: user.token,
      body: { enabled: true, threshold: 0, package_slug: 'starter' },
    });

    // Assess
    expect(initial.body.data).toMatchObject({ enabled: false, threshold: null });
    expect(initial.body.data.available_packages).toHaveLength(3);
    expect(set.status).toBe(200);
    expect(alias.body.data).toMatchObject({ enabled: true, threshold: 1000, package_slug: 'starter' });
    expect(unknown.status).toBe(400);
    expect(zero.status).toBe(400);
  });
});
