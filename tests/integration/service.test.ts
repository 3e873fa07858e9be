import { describe, expect, it } from 'vitest';
import { handler as docs } from '#functions/http/docs';
import { handler as service } from '#functions/http/service';
import { bodyOf, context, httpEvent, loadEvent } from '#tests/support/events';

describe('service probes (DynamoDB Local reachable)', () => {
  it('answers GET /health with the health record from the sample event', async () => {
    const response = await service(loadEvent('http/get-health'), context());

    expect(response.statusCode).toBe(200);
    expect(bodyOf(response)).toEqual({
      data: {
        status: 'ok',
        version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
        uptime: expect.any(Number),
        db: 'connected',
        cache: 'not_configured',
      },
    });
    expect(response.headers['X-Trace-Id']).toBeTruthy();
  });

  it('answers /api/v1/health the same', async () => {
    const response = await service(httpEvent('GET', '/api/v1/health'), context());
    expect(bodyOf(response)).toMatchObject({ data: { status: 'ok', db: 'connected' } });
  });

  it('answers /version, /ready, /arch-health and /v1/public/health', async () => {
    const version = await service(httpEvent('GET', '/api/version'), context());
    const ready = await service(httpEvent('GET', '/api/ready'), context());
    const arch = await service(httpEvent('GET', '/api/arch-health'), context());
    const pub = await service(httpEvent('GET', '/api/v1/public/health'), context());

    expect(bodyOf(version)).toEqual({ data: { version: expect.any(String), uptime: expect.any(Number) } });
    expect(bodyOf(ready)).toEqual({ data: { ready: true, db: 'connected' } });
    expect(arch.statusCode).toBe(200);
    expect(bodyOf(arch)).toMatchObject({
      data: {
        status: 'ok',
        checks: {
          database: { status: 'ok' },
          memory: { status: 'ok' },
          tunnel: { status: 'not_configured' },
          rate_limits: { status: 'not_configured' },
        },
      },
    });
    expect(bodyOf(pub)).toMatchObject({ data: { status: 'ok' } });
  });

  it('answers POST with broken JSON with 400 INVALID_JSON and keeps the caller trace id', async () => {
    const response = await service(loadEvent('http/post-invalid-json'), context());

    expect(response.statusCode).toBe(400);
    expect(bodyOf(response)).toEqual({
      error: { code: 'INVALID_JSON', message: 'The request body is not valid JSON', details: [] },
    });
    expect(response.headers['X-Trace-Id']).toBe('sample-trace-0001');
  });
});

describe('docs', () => {
  it('serves the OpenAPI document', async () => {
    const response = await docs(loadEvent('http/get-docs-openapi'), context());
    expect(response.statusCode).toBe(200);
    expect(response.headers['Content-Type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(response.body ?? '')).toMatchObject({ openapi: '3.0.3', paths: { '/health': {} } });
  });

  it('serves the Swagger UI page with asset links under the prefix it was called with', async () => {
    const page = await docs(httpEvent('GET', '/api/v1/docs'), context());
    expect(page.headers['Content-Type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('src="/api/v1/docs/swagger-ui-bundle.js"');
    expect(page.headers['Content-Security-Policy']).toContain("script-src 'self'");
  });

  it('serves its assets from the package, images base64-encoded', async () => {
    const script = await docs(httpEvent('GET', '/api/docs/swagger-ui-bundle.js'), context());
    const icon = await docs(httpEvent('GET', '/api/docs/favicon-32x32.png'), context());
    const init = await docs(httpEvent('GET', '/api/docs/init.js'), context());

    expect(script.statusCode).toBe(200);
    expect(script.body?.length).toBeGreaterThan(100_000);
    expect(icon.isBase64Encoded).toBe(true);
    expect(
      Buffer.from(icon.body ?? '', 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(init.body).toContain("base + '/docs/openapi.json'");
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])(
    'answers the asset name %s with 404, not 500',
    async (name) => {
      const response = await docs(httpEvent('GET', `/api/docs/${name}`), context());
      expect(response.statusCode).toBe(404);
      expect(bodyOf(response)).toMatchObject({ error: { code: 'NOT_FOUND' } });
    },
  );

  it('answers any other asset name with 404', async () => {
    const response = await docs(httpEvent('GET', '/api/docs/..%2Fpackage.json'), context());
    expect(response.statusCode).toBe(404);
    expect(bodyOf(response)).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});
