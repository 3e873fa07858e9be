import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripeClient, stripePayments } from '#lib/adapters/aws/stripe-payments';
import { findPackage } from '#lib/billing/catalogue';
import { packageCheckout, tierCheckout } from '#lib/billing/checkout';

/**
 * Contract test of the Stripe adapter: the real stripe client talks to a local HTTP server that stands
 * in for api.stripe.com, records each form-encoded request and answers a canned object.
 */
interface Recorded {
  method: string;
  path: string;
  form: URLSearchParams;
  headers: IncomingMessage['headers'];
}

const recorded: Recorded[] = [];
let server: Server;
let port: number;

const canned: Record<string, object> = {
  '/v1/checkout/sessions': {
    id: 'cs_test_1',
    object: 'checkout.session',
    url: 'https://checkout.stripe.test/cs_test_1',
  },
  '/v1/billing_portal/sessions': {
    id: 'bps_1',
    object: 'billing_portal.session',
    url: 'https://billing.stripe.test/p/1',
  },
  '/v1/customers': { id: 'cus_new', object: 'customer' },
  '/v1/payment_intents': {
    id: 'pi_1',
    object: 'payment_intent',
    client_secret: 'pi_1_secret_x',
    amount: 5000,
    currency: 'usd',
    status: 'requires_payment_method',
  },
};

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const path = request.url ?? '';
      recorded.push({
        method: request.method ?? '',
        path,
        form: new URLSearchParams(body),
        headers: request.headers,
      });
      response.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_1' });
      response.end(JSON.stringify(canned[path] ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const adapter = () => stripePayments(stripeClient('sk_test_contract', { host: '127.0.0.1', port, protocol: 'http' }));

const last = () => recorded.at(-1) as Recorded;

describe('the Stripe payments adapter', () => {
  it('creates a subscription-mode checkout session with the tier’s catalogue price', async () => {
    // Act
    const session = await adapter().createCheckoutSession({
      orgId: 'org1',
      ...tierCheckout('pro'),
      successUrl: 'https://app.test/ok',
      cancelUrl: 'https://app.test/cancel',
    });

    // Assess
    expect(session).toEqual({ id: 'cs_test_1', url: 'https://checkout.stripe.test/cs_test_1' });
    const request = last();
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/checkout/sessions');
    expect(request.headers.authorization).toBe('Bearer sk_test_contract');
    expect(request.form.get('mode')).toBe('subscription');
    expect(request.form.get('line_items[0][price_data][unit_amount]')).toBe('2900');
    expect(request.form.get('line_items[0][price_data][recurring][interval]')).toBe('month');
    expect(request.form.get('metadata[org_id]')).toBe('org1');
    expect(request.form.get('metadata[kind]')).toBe('tier');
    expect(request.form.get('subscription_data[metadata][tier]')).toBe('pro');
    expect(request.form.get('success_url')).toBe('https://app.test/ok');
  });

  it('creates a payment-mode checkout session for a token package', async () => {
    // Act
    await adapter().createCheckoutSession({
      orgId: 'org1',
      ...packageCheckout('growth'),
      successUrl: 'https://app.test/ok',
      cancelUrl: 'https://app.test/cancel',
    });

    // Assess
    const request = last();
    expect(request.form.get('mode')).toBe('payment');
    expect(request.form.get('line_items[0][price_data][unit_amount]')).toBe('5000');
    expect(request.form.get('metadata[package]')).toBe('growth');
    expect(request.form.get('payment_intent_data[metadata][source]')).toBe('checkout');
  });

  it('creates a billing portal session for the customer', async () => {
    // Act
    const portal = await adapter().createPortalSession({
      orgId: 'org1',
      customerId: 'cus_1',
      returnUrl: 'https://app.test/billing',
    });

    // Assess
    expect(portal).toEqual({ url: 'https://billing.stripe.test/p/1' });
    expect(last().path).toBe('/v1/billing_portal/sessions');
    expect(last().form.get('customer')).toBe('cus_1');
    expect(last().form.get('return_url')).toBe('https://app.test/billing');
  });

  it('creates the organization’s customer once, keyed by the organization', async () => {
    // Act
    const customer = await adapter().createCustomer({ orgId: 'org1', name: 'Acme' });

    // Assess
    expect(customer).toEqual({ customerId: 'cus_new' });
    expect(last().path).toBe('/v1/customers');
    expect(last().headers['idempotency-key']).toBe('customer:org1');
    expect(last().form.get('name')).toBe('Acme');
    expect(last().form.get('metadata[org_id]')).toBe('org1');
  });

  it('creates a payment intent with the package price and sends the idempotency key', async () => {
    // Act
    const intent = await adapter().createPaymentIntent({
      orgId: 'org1',
      package: 'growth',
      amountCents: findPackage('growth')?.price_cents ?? 0,
      currency: 'usd',
      idempotencyKey: 'org1:k1',
    });

    // Assess
    expect(intent).toEqual({
      id: 'pi_1',
      client_secret: 'pi_1_secret_x',
      amount: 5000,
      currency: 'usd',
      status: 'requires_payment_method',
    });
    expect(last().path).toBe('/v1/payment_intents');
    expect(last().headers['idempotency-key']).toBe('org1:k1');
    expect(last().form.get('amount')).toBe('5000');
    expect(last().form.get('metadata[source]')).toBe('payment_intent');
  });
});
