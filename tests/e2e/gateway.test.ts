import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '#infra/local/gateway';
import { checkedFetch } from '#tests/support/http-api';

let gateway: Gateway;
const url = (path: string) => `${gateway.url}${path}`;

beforeAll(async () => {
  gateway = await startGateway({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await gateway?.close();
});

describe('the local gateway over HTTP', () => {
  it('answers GET /api/health with 200, the health record and X-Trace-Id', async () => {
    const response = await checkedFetch(url('/api/health'));

    expect(response.status).toBe(200);
    expect(response.headers.get('x-trace-id')).toBeTruthy();
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toMatchObject({
      data: { status: 'ok', db: 'connected', cache: 'not_configured' },
    });
  });

  it('answers /api/v1/health the same', async () => {
    const response = await checkedFetch(url('/api/v1/health'));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: { status: 'ok' } });
  });

  it('answers an unknown path with the 404 envelope, through the $default function', async () => {
    const response = await checkedFetch(url('/api/nope'), { headers: { 'x-trace-id': 'e2e-404' } });

    expect(response.status).toBe(404);
    expect(response.headers.get('x-trace-id')).toBe('e2e-404');
    expect(await response.json()).toEqual({
      error: { code: 'NOT_FOUND', message: 'No route for GET /api/nope', details: [] },
    });
  });

  it('answers a POST with broken JSON with 400 INVALID_JSON', async () => {
    const response = await checkedFetch(url('/api/health'), { method: 'POST', body: '{broken' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'INVALID_JSON' } });
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const response = await checkedFetch(url('/api/health'), { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
  });

  it('answers a 2 MiB body with 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await checkedFetch(url('/api/health'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ blob: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('answers HEAD with headers and no body', async () => {
    const response = await checkedFetch(url('/api/health'), { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('answers a CORS preflight from an allowed origin', async () => {
    const response = await checkedFetch(url('/api/health'), {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'GET' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
  });

  it('serves the docs page, its assets and the OpenAPI document', async () => {
    const page = await checkedFetch(url('/api/docs'));
    const css = await checkedFetch(url('/api/docs/swagger-ui.css'));
    const icon = await checkedFetch(url('/api/docs/favicon-32x32.png'));
    const document = await checkedFetch(url('/api/docs/openapi.json'));

    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('<div id="swagger-ui">');
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(
      Buffer.from(await icon.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(await document.json()).toMatchObject({ openapi: '3.0.3' });
  });
});
