import { HttpResult, WithMeta } from '#lib/http/results';
import type { RouteDef } from '#lib/http/route';
import type { HttpResponse } from '#lib/http/types';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The one place a route function's value becomes a response, as its registry entry says: `item` is
 * `{ data }`, `list` turns a page `{ items, total, limit, offset }` into `{ data, meta }`, `deleted` is
 * `{ data, meta: { deleted: true } }`, each with the entry's `status` (200 unless given). An
 * `HttpResult` (cookies, a run-time status, a raw body) is sent as it says.
 */
export function toResponse(result: unknown, def: RouteDef, query: unknown, validate: boolean): HttpResponse {
  const outcome =
    result instanceof HttpResult ? result : new HttpResult(def.status ?? 200, envelope(result, def, query));
  if (outcome.raw) {
    return {
      statusCode: outcome.status,
      headers: { ...outcome.headers },
      body: outcome.body as string,
      isBase64Encoded: outcome.isBase64Encoded,
      cookies: outcome.cookies,
    };
  }
  if (validate) assertMatchesSchema(outcome.body, def);
  return {
    statusCode: outcome.status,
    headers: { 'Content-Type': JSON_TYPE, ...outcome.headers },
    body: JSON.stringify(outcome.body),
    ...(outcome.cookies.length > 0 ? { cookies: outcome.cookies } : {}),
  };
}

function envelope(result: unknown, def: RouteDef, query: unknown): Record<string, unknown> {
  const [data, extra] = result instanceof WithMeta ? [result.data, result.meta] : [result, undefined];
  switch (def.envelope ?? 'item') {
    case 'list': {
      const page = data as { items?: unknown; total?: number; limit?: number; offset?: number };
      if (!Array.isArray(page?.items)) {
        throw new Error(`${def.method} ${def.path} is a list route; its function must return a page`);
      }
      // A route without a query schema sees the raw strings of the query: only parsed numbers count.
      const asked = (query ?? {}) as { limit?: unknown; offset?: unknown };
      const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
      const meta = {
        total: page.total ?? page.items.length,
        limit: page.limit ?? number(asked.limit) ?? page.items.length,
        offset: page.offset ?? number(asked.offset) ?? 0,
      };
      return { data: page.items, meta: { ...meta, ...extra } };
    }
    case 'deleted':
      return { data, meta: { deleted: true, ...extra } };
    case 'raw':
      throw new Error(`${def.method} ${def.path} answers a raw body; its function must return rawResponse(…)`);
    default:
      return extra ? { data, meta: extra } : { data };
  }
}

/**
 * With VALIDATE_RESPONSES (tests, local development) every response is checked against the route's
 * declared schema, so the OpenAPI document cannot drift from what the code sends.
 */
function assertMatchesSchema(body: unknown, def: RouteDef): void {
  if (!def.response) return;
  const data = (body as { data?: unknown }).data;
  const items = Array.isArray(data) && def.envelope === 'list' ? data : [data];
  for (const item of items) {
    const result = def.response.safeParse(item);
    if (!result.success) {
      throw new Error(
        `Response of ${def.method} ${def.path} does not match its schema: ${JSON.stringify(result.error.issues)}`,
      );
    }
  }
}
