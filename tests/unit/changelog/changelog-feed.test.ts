import { describe, expect, it } from 'vitest';
import { xmlText } from '#lib/changelog/changelog-feed';
import { buildOpenApiDocument } from '#lib/openapi/document';
import { allRoutes } from '#lib/routes/index';

describe('xmlText', () => {
  it('drops the characters XML 1.0 cannot hold and keeps the rest', () => {
    // Act
    const text = xmlText('a\u0000b\u0007c\td\ne\rf\uD800g\uFFFEh\u{1F680}i é');

    // Assess
    expect(text).toBe('abc\td\ne\rfgh\u{1F680}i é');
  });

  it('breaks every CDATA end marker, not only the first', () => {
    expect(xmlText('a ]]> b ]]> c')).toBe('a ]]\u200B> b ]]\u200B> c');
  });
});

describe('the OpenAPI document', () => {
  it('shows the changelog feed as application/rss+xml, outside the envelope', () => {
    // Act
    const document = buildOpenApiDocument(allRoutes) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, unknown> }> } }>;
    };

    // Assess
    const success = document.paths['/changelog/feed']?.get.responses['200'];
    expect(Object.keys(success?.content ?? {})).toEqual(['application/rss+xml']);
    expect(document.paths['/changelog/feed']?.get.responses['401']?.content).toHaveProperty(['application/json']);
  });
});
