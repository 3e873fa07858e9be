import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '#lib/openapi/document';
import { withoutFlags } from '#lib/openapi/patterns';
import { allRoutes } from '#lib/routes/index';

describe('the OpenAPI document', () => {
  const document = buildOpenApiDocument(allRoutes);

  it('is a valid OpenAPI 3.0 document', async () => {
    // validate() dereferences in place; give it a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
    expect(document.openapi).toBe('3.0.3');
  });

  it('describes the success body of every JSON route with a schema', () => {
    for (const route of allRoutes) {
      const item = document.paths[route.path] as Record<string, { responses: Record<string, unknown> }>;
      const operation = item?.[route.method.toLowerCase()];
      const success = operation?.responses[String(route.status ?? 200)] as {
        content?: Record<string, { schema?: unknown }>;
      };
      expect(success?.content, `${route.method} ${route.path}`).toBeDefined();
      const [mediaType] = Object.values(success.content ?? {});
      expect(mediaType?.schema, `${route.method} ${route.path}`).toBeDefined();
    }
  });

  it('gives every route the error envelope for its error statuses', () => {
    const health = (document.paths['/health'] as { get: { responses: Record<string, unknown> } }).get;
    expect(health.responses['500']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    });
    expect(health.responses['503']).toMatchObject({
      content: {
        'application/json': {
          schema: { properties: { data: { $ref: '#/components/schemas/HealthRecord' } } },
        },
      },
    });
  });

  it('lists 503 with Retry-After semantics on every route that authenticates a bearer', () => {
    for (const route of allRoutes.filter((candidate) => candidate.auth === 'bearer')) {
      const item = document.paths[route.path] as Record<string, { responses: Record<string, unknown> }>;
      const responses = item[route.method.toLowerCase()]?.responses ?? {};
      expect(responses['503'], `${route.method} ${route.path}`).toMatchObject({
        description: expect.stringContaining('Retry-After'),
      });
    }
  });

  it('answers every list as { data, meta }: no route sends a bare array as its data', () => {
    const bare = allRoutes
      .filter((route) => (route.response as { def?: { type?: string } } | undefined)?.def?.type === 'array')
      .map((route) => `${route.method} ${route.path}`);
    expect(bare).toEqual([]);
  });

  it('shows each error status with an example of its own code', () => {
    const codeOf: Record<string, string> = {
      '400': 'VALIDATION_ERROR',
      '401': 'UNAUTHORIZED',
      '402': 'PAYMENT_REQUIRED',
      '403': 'FORBIDDEN',
      '404': 'NOT_FOUND',
      '405': 'METHOD_NOT_ALLOWED',
      '409': 'CONFLICT',
      '413': 'PAYLOAD_TOO_LARGE',
      '422': 'UNPROCESSABLE',
      '429': 'RATE_LIMITED',
      '500': 'INTERNAL_ERROR',
      '503': 'SERVICE_UNAVAILABLE',
    };
    const wrong: string[] = [];
    for (const route of allRoutes) {
      const item = document.paths[route.path] as Record<string, { responses: Record<string, unknown> }>;
      const responses = item?.[route.method.toLowerCase()]?.responses ?? {};
      for (const [status, response] of Object.entries(responses)) {
        const media = (response as { content?: Record<string, { example?: { error?: { code?: string } } }> }).content?.[
          'application/json'
        ];
        if (Number(status) < 400 || !codeOf[status] || (route.alsoAnswers ?? []).includes(Number(status))) continue;
        if (media?.example?.error?.code !== codeOf[status]) wrong.push(`${route.method} ${route.path} ${status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('writes the decisions on open questions into the document', () => {
    expect(document.info.description).toContain('/api/v1');
    expect(document.info.description).toContain('clamped to 200');
    expect(document.servers?.map((server) => server.url)).toEqual(['/api', '/api/v1']);
  });

  it('gives every nullable schema a type beside it, as OpenAPI 3.0 requires', () => {
    // Arrange
    const typeless: string[] = [];
    const visit = (value: unknown, at: string): void => {
      if (typeof value !== 'object' || value === null) return;
      const schema = value as Record<string, unknown>;
      if (schema.nullable === true && schema.type === undefined) typeless.push(at);
      for (const [key, child] of Object.entries(schema)) visit(child, `${at}/${key}`);
    };

    // Act
    visit(document, '#');

    // Assess
    expect(typeless).toEqual([]);
  });

  it('keeps null allowed where the schema allows it: nullable references and null-only fields', () => {
    // Arrange
    const data = (path: string) =>
      (document.paths[path] as { get: { responses: Record<string, unknown> } }).get.responses['200'] as {
        content: { 'application/json': { schema: { properties: { data: { properties: Record<string, unknown> } } } } };
      };

    // Act
    const subscription =
      data('/billing/plan-summary').content['application/json'].schema.properties.data.properties.subscription;
    const spend =
      data('/billing/overview').content['application/json'].schema.properties.data.properties.infrastructure_spend;

    // Assess
    expect(subscription).toEqual({
      anyOf: [{ $ref: '#/components/schemas/Subscription' }, { type: 'object', nullable: true, enum: [null] }],
    });
    expect(spend).toEqual({ type: 'string', nullable: true, enum: [null] });
  });

  it('writes each pattern as its expression, without the flags that would make it match nothing', () => {
    // Arrange
    const patterns: string[] = [];
    const visit = (value: unknown): void => {
      if (typeof value !== 'object' || value === null) return;
      const schema = value as Record<string, unknown>;
      if (typeof schema.pattern === 'string') patterns.push(schema.pattern);
      for (const child of Object.values(schema)) visit(child);
    };

    // Act
    visit(document);
    const files = document.paths['/files'] as unknown as {
      post: {
        requestBody: { content: { 'application/json': { schema: { properties: { name: { pattern: string } } } } } };
      };
    };
    const fileName = files.post.requestBody.content['application/json'];

    // Assess
    expect(patterns.filter((pattern) => /(^|[^\\])\/[a-z]+$/.test(pattern))).toEqual([]);
    expect(fileName.schema.properties.name.pattern).toBe('^[^\\p{Cc}]+$');
    expect(new RegExp(fileName.schema.properties.name.pattern, 'u').test('notes.md')).toBe(true);
  });

  it('refuses a pattern whose flags change what it matches, and keeps an escaped slash', () => {
    expect(withoutFlags('^a\\/u')).toBe('^a\\/u');
    expect(withoutFlags('^[^\\p{Cc}]+$/u')).toBe('^[^\\p{Cc}]+$');
    expect(() => withoutFlags('^abc$/i')).toThrow('flags (i)');
  });

  it('requires a request body unless the route may be called without one', () => {
    // Arrange
    const requestBody = (method: string, path: string) =>
      (document.paths[path] as Record<string, { requestBody?: { required?: boolean } }>)[method]?.requestBody;

    // Act
    const optional = allRoutes
      .filter((route) => route.body && requestBody(route.method.toLowerCase(), route.path)?.required !== true)
      .map((route) => `${route.method} ${route.path}`);

    // Assess
    expect(optional).toEqual(
      allRoutes
        .filter((route) => route.body?.safeParse(undefined).success && route.auth !== 'signature')
        .map((route) => `${route.method} ${route.path}`),
    );
    expect(optional).toContain('POST /auth/logout');
    expect(requestBody('post', '/webhooks/git')?.required).toBe(true);
    expect(requestBody('post', '/tasks')?.required).toBe(true);
  });
});
