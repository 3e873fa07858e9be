import type { HttpMiddleware, HttpRequest } from '#lib/http/types';

/**
 * Lower-cases header names and fills `cookies` from a Cookie header. API Gateway already does for HTTP APIs, but
 * sample events, local invokes and other proxies may not, and every later middleware reads lower-case names.
 */
export const normalizeHeaders = (): HttpMiddleware => {
  const normalizeHeadersBefore = async (request: HttpRequest) => {
    // No prototype: a header named `__proto__` or `constructor` is a header like any other.
    const normalized: Record<string, string> = Object.create(null);
    for (const [name, value] of Object.entries(request.event.headers ?? {})) {
      if (value === undefined) continue;
      const key = name.toLowerCase();
      normalized[key] = Object.hasOwn(normalized, key) ? `${normalized[key]},${value}` : value;
    }
    request.event.headers = normalized;
    // Payload 2.0 carries cookies in `cookies`; events built by hand or by other proxies carry the header.
    if (request.event.cookies === undefined && normalized.cookie) {
      request.event.cookies = normalized.cookie.split(/;\s*/).filter(Boolean);
    }
    request.context.pathParams ??= {};
  };
  return { before: normalizeHeadersBefore };
};
