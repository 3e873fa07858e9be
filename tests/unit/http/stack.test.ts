import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { ConflictError, RateLimitedError, UnauthorizedError } from '#lib/errors';
import { groupHandler, route } from '#lib/http/group-handler';
import { MAX_BODY_BYTES } from '#lib/http/middleware/json-body';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { logger } from '#lib/logger';
import { bodyOf, context, httpEvent } from '#tests/support/events';
import { captureLogs } from '#tests/support/logs';

const group = 'example';
const tags = ['Example'];
const Widget = z.object({ id: z.number().int(), name: z.string() });

const getWidget = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/widgets/{id}',
  auth: 'none',
  summary: 'one widget',
  params: z.object({ id: z.string().regex(/^\d+$/, 'must be an integer').transform(Number) }),
  response: Widget,
});
const listWidgets = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/widgets',
  auth: 'none',
  summary: 'widgets',
  query: pagingQuery,
  envelope: 'list',
  response: Widget,
});
const createWidget = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/widgets',
  auth: 'none',
  summary: 'create',
  body: z.object({ name: z.string().min(1), size: z.number().int().optional() }),
  response: Widget,
  status: 201,
});
const deleteWidget = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/widgets/{id}',
  auth: 'none',
  summary: 'delete',
  envelope: 'deleted',
});
const mine = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/widgets/mine',
  auth: 'bearer',
  summary: 'mine',
});
const broken = defineRoute({ group, tags, method: 'GET', path: '/broken', auth: 'none', summary: 'fails' });
const conflict = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/conflict',
  auth: 'none',
  summary: 'conflicts',
});
const limited = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/limited',
  auth: 'none',
  summary: 'limited',
});
const wrongShape = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/wrong-shape',
  auth: 'none',
  summary: 'returns a body its schema does not allow',
  response: Widget,
});

const ORIGIN = 'https://app.example.com';

const handler = groupHandler(
  group,
  [
    route(getWidget, async ({ params }) => ({ id: params.id, name: `widget ${params.id}` })),
    route(listWidgets, async ({ query }) => ({
      items: [{ id: 1, name: 'one' }],
      total: 1,
      limit: query.limit,
      offset: query.offset,
    })),
    route(createWidget, async ({ body }) => ({ id: 7, name: body.name })),
    route(deleteWidget, async () => ({ id: 7 })),
    route(mine, async ({ principal }) => ({ org: principal?.orgId })),
    route(broken, async () => {
      throw new Error('database password is hunter2');
    }),
    route(conflict, async () => {
      throw new ConflictError('Widget exists', [{ path: 'body.name', message: 'taken' }]);
    }),
    route(limited, async () => {
      throw new RateLimitedError(17);
    }),
    route(wrongShape, async () => ({ id: 'not-a-number' })),
  ],
  {
    allowedOrigins: [ORIGIN],
    validateResponses: true,
    authenticator: {
      authenticate: async (_ctx, credential) => {
        if (credential.value !== 'good') throw new UnauthorizedError();
        return {
          method: 'api_key',
          orgId: 'org-1',
          capability: 'read',
          isInstanceAdmin: false,
          scopes: ['read'],
          organization: { id: 'org-1', name: 'Org', slug: 'org' },
        };
      },
    },
  },
);

const call = (...args: Parameters<typeof httpEvent>) => handler(httpEvent(...args), context());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

afterEach(() => {
  vi.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

describe('the HTTP stack', () => {
  it('answers a route with the item envelope, JSON type, a trace id and security headers', async () => {
    // Act
    const response = await call('GET', '/api/widgets/3');

    // Assess
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response)).toEqual({ data: { id: 3, name: 'widget 3' } });
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/json; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
    });
    expect(response.headers['X-Trace-Id']).toMatch(UUID);
  });

  it('serves every route under the /api/v1 alias too', async () => {
    const response = await call('GET', '/api/v1/widgets/3');
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response)).toEqual({ data: { id: 3, name: 'widget 3' } });
  });

  it('keeps a sane caller trace id and replaces one that is not', async () => {
    const kept = await call('GET', '/api/widgets/1', { headers: { 'x-trace-id': 'client-trace.42:a' } });
    const replaced = await call('GET', '/api/widgets/1', { headers: { 'x-trace-id': 'bad id\n<script>' } });
    const tooLong = await call('GET', '/api/widgets/1', { headers: { 'x-trace-id': 'a'.repeat(129) } });

    expect(kept.headers['X-Trace-Id']).toBe('client-trace.42:a');
    expect(replaced.headers['X-Trace-Id']).toMatch(UUID);
    expect(tooLong.headers['X-Trace-Id']).toMatch(UUID);
  });

  it('reads mixed-case header names', async () => {
    const event = httpEvent('GET', '/api/widgets/1');
    event.headers = { 'X-Trace-Id': 'mixed-case-trace' };
    const response = await handler(event, context());
    expect(response.headers['X-Trace-Id']).toBe('mixed-case-trace');
  });

  it('answers an unknown path with 404 in the error envelope, with trace id and security headers', async () => {
    const response = await call('GET', '/api/nope', { headers: { 'x-trace-id': 'trace-404' } });

    expect(response.statusCode).toBe(404);
    expect(bodyOf(response)).toEqual({
      error: { code: 'NOT_FOUND', message: 'No route for GET /api/nope', details: [] },
    });
    expect(response.headers).toMatchObject({
      'X-Trace-Id': 'trace-404',
      'X-Content-Type-Options': 'nosniff',
    });
  });

  it('answers paths outside /api with 404', async () => {
    const response = await call('GET', '/widgets/1');
    expect(response.statusCode).toBe(404);
  });

  it('answers a known path with a wrong method with 405 and Allow', async () => {
    const response = await call('PUT', '/api/widgets/3');

    expect(response.statusCode).toBe(405);
    expect(response.headers.Allow).toBe('GET, DELETE');
    expect(bodyOf(response)).toMatchObject({ error: { code: 'METHOD_NOT_ALLOWED' } });
  });

  it('prefers a literal segment over a parameter', async () => {
    const response = await call('GET', '/api/widgets/mine', { headers: { authorization: 'Bearer good' } });
    expect(bodyOf(response)).toEqual({ data: { org: 'org-1' } });
  });

  it('answers malformed JSON with 400 INVALID_JSON and no trace of the body', async () => {
    const response = await call('POST', '/api/widgets', { body: '{"name": "secret-value' });

    expect(response.statusCode).toBe(400);
    expect(bodyOf(response)).toEqual({
      error: { code: 'INVALID_JSON', message: 'The request body is not valid JSON', details: [] },
    });
    expect(response.body).not.toContain('secret-value');
  });

  it('answers malformed JSON with 400 before routing, whatever the Content-Type', async () => {
    const response = await call('POST', '/api/widgets/3', {
      body: '{bad',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response)).toMatchObject({ error: { code: 'INVALID_JSON' } });
  });

  it('answers a body over 1 MiB with 413 PAYLOAD_TOO_LARGE and accepts one at the limit', async () => {
    const filler = (size: number) => JSON.stringify({ name: 'x'.repeat(size - 11) });
    expect(Buffer.byteLength(filler(MAX_BODY_BYTES))).toBe(MAX_BODY_BYTES);

    const atLimit = await call('POST', '/api/widgets', { body: filler(MAX_BODY_BYTES) });
    const over = await call('POST', '/api/widgets', { body: filler(MAX_BODY_BYTES + 1) });

    expect(atLimit.statusCode).toBe(201);
    expect(over.statusCode).toBe(413);
    expect(bodyOf(over)).toEqual({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body is larger than ${MAX_BODY_BYTES} bytes`,
        details: [],
      },
    });
  });

  it('answers a number the table cannot store with 400 naming where it is, and takes those it can', async () => {
    // Arrange
    const body = (value: string) => `{"name":"w","extra":{"list":[1,${value}]}}`;
    const refused = ['1e400', '-1e400', '1e300', '9007199254740992', '5e-324', '1e-131'];
    const taken = ['0', '-0.5', '1e-130', '9007199254740991', '-9007199254740991', '1e-400'];

    // Act
    const refusals = await Promise.all(refused.map((value) => call('POST', '/api/widgets', { body: body(value) })));
    const takings = await Promise.all(taken.map((value) => call('POST', '/api/widgets', { body: body(value) })));

    // Assess
    for (const response of refusals) {
      expect(bodyOf(response)).toEqual({
        error: {
          code: 'VALIDATION_ERROR',
          message: 'The request body holds a value the service cannot store',
          details: [
            { path: 'body.extra.list[1]', message: 'must be 0 or between 1e-130 and 9007199254740991 in magnitude' },
          ],
        },
      });
    }
    expect(takings.map((response) => response.statusCode)).toEqual(taken.map(() => 201));
  });

  it('answers a string or key with an unpaired surrogate with 400, and takes proper pairs and NUL', async () => {
    // Arrange: JSON escapes, as a client sends them; a lone surrogate has no UTF-8 form to store.
    const refused = ['{"name":"a\\ud800b"}', '{"name":"\\udfff"}', '{"name":"w","extra":{"\\ud83d":1}}'];
    const taken = ['{"name":"\\ud83d\\ude00"}', '{"name":"a\\u0000b"}', '{"name":"ok","extra":{"\\u00e9":1}}'];

    // Act
    const refusals = await Promise.all(refused.map((body) => call('POST', '/api/widgets', { body })));
    const takings = await Promise.all(taken.map((body) => call('POST', '/api/widgets', { body })));

    // Assess
    expect(refusals.map((response) => response.statusCode)).toEqual([400, 400, 400]);
    expect(refusals.map((response) => (bodyOf(response) as { error: { details: unknown } }).error.details)).toEqual([
      [{ path: 'body.name', message: expect.stringContaining('unpaired surrogate') }],
      [{ path: 'body.name', message: expect.stringContaining('unpaired surrogate') }],
      [{ path: 'body.extra', message: expect.stringContaining('has a key that') }],
    ]);
    expect(takings.map((response) => response.statusCode)).toEqual([201, 201, 201]);
  });

  it('decodes a base64-encoded body', async () => {
    const response = await call('POST', '/api/widgets', { body: '{"name":"b64"}', base64: true });
    expect(response.statusCode).toBe(201);
    expect(bodyOf(response)).toEqual({ data: { id: 7, name: 'b64' } });
  });

  it('answers an invalid body with 400 VALIDATION_ERROR naming each problem', async () => {
    const response = await call('POST', '/api/widgets', { body: '{"name":"","size":1.5}' });

    expect(response.statusCode).toBe(400);
    const body = bodyOf(response) as {
      error: { code: string; details: Array<{ path: string; message: string }> };
    };
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.map((detail) => detail.path)).toEqual(['body.name', 'body.size']);
  });

  it('answers a missing body with 400 naming the body', async () => {
    const response = await call('POST', '/api/widgets');
    expect(bodyOf(response)).toEqual({
      error: {
        code: 'VALIDATION_ERROR',
        message: 'The request is not valid',
        details: [{ path: 'body', message: 'A JSON body is required' }],
      },
    });
  });

  it('answers an invalid path parameter with 400 naming it', async () => {
    const response = await call('GET', '/api/widgets/abc');
    expect(bodyOf(response)).toEqual({
      error: {
        code: 'VALIDATION_ERROR',
        message: 'The request is not valid',
        details: [{ path: 'params.id', message: 'must be an integer' }],
      },
    });
  });

  it('answers a badly percent-encoded path with 400', async () => {
    const response = await call('GET', '/api/widgets/%E0%A4%A');
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response)).toMatchObject({ error: { details: [{ path: 'params.id' }] } });
  });

  describe('paging', () => {
    it('defaults to limit 50 and offset 0', async () => {
      const response = await call('GET', '/api/widgets');
      expect(bodyOf(response)).toEqual({
        data: [{ id: 1, name: 'one' }],
        meta: { total: 1, limit: 50, offset: 0 },
      });
    });

    it('clamps a limit above 200 to 200 and accepts 0', async () => {
      const clamped = await call('GET', '/api/widgets', { query: { limit: '500', offset: '10' } });
      const zero = await call('GET', '/api/widgets', { query: { limit: '0' } });
      expect(bodyOf(clamped)).toMatchObject({ meta: { limit: 200, offset: 10 } });
      expect(bodyOf(zero)).toMatchObject({ meta: { limit: 0, offset: 0 } });
    });

    it.each([
      ['limit', '-1'],
      ['limit', '1.5'],
      ['limit', 'ten'],
      ['offset', '-5'],
      ['offset', ''],
    ])('answers %s=%s with 400', async (name, value) => {
      const response = await call('GET', '/api/widgets', { query: { [name]: value } });
      expect(response.statusCode).toBe(400);
      expect(bodyOf(response)).toMatchObject({
        error: { code: 'VALIDATION_ERROR', details: [{ path: `query.${name}` }] },
      });
    });
  });

  it('answers created with 201 and deletions with data and meta', async () => {
    const made = await call('POST', '/api/widgets', { body: '{"name":"new"}' });
    const gone = await call('DELETE', '/api/widgets/7');

    expect(made.statusCode).toBe(201);
    expect(bodyOf(gone)).toEqual({ data: { id: 7 }, meta: { deleted: true } });
  });

  it('maps domain errors to their status, code, details and headers', async () => {
    const conflicted = await call('GET', '/api/conflict');
    const throttled = await call('GET', '/api/limited');

    expect(conflicted.statusCode).toBe(409);
    expect(bodyOf(conflicted)).toEqual({
      error: {
        code: 'CONFLICT',
        message: 'Widget exists',
        details: [{ path: 'body.name', message: 'taken' }],
      },
    });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers['Retry-After']).toBe('17');
  });

  it('answers an unexpected error with a bare 500 and logs it under the trace id', async () => {
    // Prepare
    const lines = captureLogs('ERROR');

    // Act
    const response = await call('GET', '/api/broken', { headers: { 'x-trace-id': 'trace-500' } });

    // Assess
    expect(response.statusCode).toBe(500);
    expect(bodyOf(response)).toEqual({
      error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred', details: [] },
    });
    expect(response.body).not.toMatch(/hunter2|at |stack/);
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.message === 'request failed');
    expect(logged).toMatchObject({ level: 'ERROR', trace_id: 'trace-500', code: 'INTERNAL_ERROR' });
  });

  it('answers 500 when a response does not match its declared schema', async () => {
    const response = await call('GET', '/api/wrong-shape');
    expect(response.statusCode).toBe(500);
  });

  describe('authentication hook', () => {
    it('answers a bearer route without a valid credential with 401', async () => {
      const response = await call('GET', '/api/widgets/mine');
      expect(response.statusCode).toBe(401);
      expect(response.headers?.['WWW-Authenticate']).toBe('Bearer realm="agent-operations"');
      expect(bodyOf(response)).toEqual({
        error: { code: 'UNAUTHORIZED', message: 'Authentication required', details: [] },
      });
    });

    it('uses the service’s bearer authenticator when none is given, which refuses unknown credentials', async () => {
      const bare = groupHandler(group, [route(mine, async () => ({ org: 'x' }))]);
      const response = await bare(
        httpEvent('GET', '/api/widgets/mine', { headers: { authorization: 'Bearer good' } }),
        context(),
      );
      expect(response.statusCode).toBe(401);
      expect(response.headers?.['WWW-Authenticate']).toBe('Bearer realm="agent-operations", error="invalid_token"');
    });
  });

  describe('CORS', () => {
    it('allows a listed origin with credentials and exposes the trace and rate-limit headers', async () => {
      const response = await call('GET', '/api/widgets/1', { headers: { origin: ORIGIN } });
      expect(response.headers).toMatchObject({
        'Access-Control-Allow-Origin': ORIGIN,
        'Access-Control-Allow-Credentials': 'true',
        Vary: 'Origin',
      });
      expect(response.headers['Access-Control-Expose-Headers']).toContain('X-Trace-Id');
    });

    it('gives an unlisted origin no CORS headers', async () => {
      const response = await call('GET', '/api/widgets/1', { headers: { origin: 'https://evil.example' } });
      expect(response.headers['Access-Control-Allow-Origin']).toBeUndefined();
    });

    it('answers a preflight with 204 and the path methods', async () => {
      const response = await call('OPTIONS', '/api/widgets/1', {
        headers: { origin: ORIGIN, 'access-control-request-method': 'DELETE' },
      });
      expect(response.statusCode).toBe(204);
      expect(response.headers).toMatchObject({
        'Access-Control-Allow-Origin': ORIGIN,
        'Access-Control-Allow-Methods': 'GET, DELETE, OPTIONS',
        'Access-Control-Max-Age': '600',
      });
      expect(response.headers['Access-Control-Allow-Headers']).toContain('Authorization');
    });

    it('answers CORS headers on errors too', async () => {
      const response = await call('GET', '/api/nope', { headers: { origin: ORIGIN } });
      expect(response.statusCode).toBe(404);
      expect(response.headers['Access-Control-Allow-Origin']).toBe(ORIGIN);
    });
  });

  it('answers HEAD like GET without a body', async () => {
    const response = await call('HEAD', '/api/widgets/1');
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('');
  });

  it('refuses to build a group with a route of another group', () => {
    expect(() => groupHandler('other', [route(broken, async () => null)])).toThrow(/belongs to example/);
  });
});
