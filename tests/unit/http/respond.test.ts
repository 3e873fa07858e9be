import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ValidationError } from '#lib/errors';
import { locateFields } from '#lib/http/field-locations';
import { toResponse } from '#lib/http/respond';
import { withMeta } from '#lib/http/results';
import { defineRoute } from '#lib/http/route';

const base = { group: 'example', tags: ['Example'], auth: 'none' as const, summary: 'example' };
const body = (response: { body?: string }) => JSON.parse(response.body ?? 'null');

describe('the response envelope, as the registry entry says', () => {
  it('wraps a value as { data } with the entry’s status', () => {
    const created = defineRoute({ ...base, method: 'POST', path: '/things', status: 201 });
    const response = toResponse({ id: 1 }, created, undefined, false);
    expect(response.statusCode).toBe(201);
    expect(body(response)).toEqual({ data: { id: 1 } });
  });

  it('turns a page into { data, meta }, taking limit and offset from the query when the page has none', () => {
    const list = defineRoute({ ...base, method: 'GET', path: '/things', envelope: 'list' });
    const response = toResponse({ items: [{ id: 1 }], total: 7 }, list, { limit: 1, offset: 3 }, false);
    expect(body(response)).toEqual({ data: [{ id: 1 }], meta: { total: 7, limit: 1, offset: 3 } });
  });

  it('marks a deletion in meta, and lets extra meta through', () => {
    const removal = defineRoute({ ...base, method: 'DELETE', path: '/things/{id}', envelope: 'deleted' });
    expect(body(toResponse({ id: 1 }, removal, undefined, false))).toEqual({
      data: { id: 1 },
      meta: { deleted: true },
    });
    expect(body(toResponse(withMeta({ id: 1 }, { deleted: false }), removal, undefined, false)).meta).toEqual({
      deleted: false,
    });
  });

  it('refuses a list route whose function returned no page', () => {
    const list = defineRoute({ ...base, method: 'GET', path: '/things', envelope: 'list' });
    expect(() => toResponse([{ id: 1 }], list, undefined, false)).toThrow(/must return a page/);
  });
});

describe('field locations of domain errors', () => {
  const route = defineRoute({
    ...base,
    method: 'POST',
    path: '/things/{id}',
    params: z.object({ id: z.string() }),
    query: z.object({ q: z.string().optional() }),
    body: z.object({ title: z.string(), fields: z.record(z.string(), z.string()) }).strict(),
  });

  it('puts each named field where the route’s schemas have it', () => {
    const error = new ValidationError('bad', [
      { path: 'title', message: 'x' },
      { path: 'fields.token', message: 'x' },
      { path: 'q', message: 'x' },
      { path: 'id', message: 'x' },
      { path: 'body.already', message: 'x' },
    ]);
    locateFields(error, route);
    expect(error.details.map((detail) => (detail as { path: string }).path)).toEqual([
      'body.title',
      'body.fields.token',
      'query.q',
      'params.id',
      'body.already',
    ]);
  });

  it('takes a field named like a location for the field when the route declares it', () => {
    const files = defineRoute({ ...base, method: 'POST', path: '/files', body: z.object({ path: z.string() }) });
    const error = new ValidationError('bad', [
      { path: 'path', message: 'x' },
      { path: 'body.path', message: 'x' },
    ]);
    locateFields(error, files);
    expect(error.details.map((detail) => (detail as { path: string }).path)).toEqual(['body.path', 'body.path']);
  });

  it('uses the request’s spelling of a renamed field', () => {
    const error = new ValidationError('bad', [{ path: 'assignee', message: 'x' }]);
    locateFields(error, route, { assignee: 'q' });
    expect((error.details[0] as { path: string }).path).toBe('query.q');
  });
});
