/**
 * What a route function may return. A plain value is the route's `data`, enveloped as its registry
 * entry says (`item`, `list` for a page, `deleted`) with the entry's status. The rest are for what the
 * registry cannot say: extra `meta` beside the data, cookies, a status chosen at run time (health
 * probes), and raw bodies outside the envelope.
 */

/** `data` with extra `meta` (a deletion's `meta` keeps `deleted: true` unless this says otherwise). */
export class WithMeta {
  constructor(
    readonly data: unknown,
    readonly meta: Record<string, unknown>,
  ) {}
}

export const withMeta = (data: unknown, meta: Record<string, unknown>): WithMeta => new WithMeta(data, meta);

export class HttpResult {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
    /** Raw bodies are sent as they are (string) instead of as the JSON envelope. */
    readonly raw = false,
    readonly isBase64Encoded = false,
    readonly cookies: string[] = [],
  ) {}
}

/** The route's envelope around `data`, and cookies to set. */
export const withCookies = (data: unknown, cookies: string[], status = 200): HttpResult =>
  new HttpResult(status, { data }, {}, false, false, cookies);

/** A status chosen at run time (a health probe answers 503 with the same record). */
export const withStatus = (status: number, data: unknown, headers: Record<string, string> = {}): HttpResult =>
  new HttpResult(status, { data }, headers);

export const rawResponse = (options: {
  status?: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
  isBase64Encoded?: boolean;
}): HttpResult =>
  new HttpResult(
    options.status ?? 200,
    options.body,
    { 'Content-Type': options.contentType, ...options.headers },
    true,
    options.isBase64Encoded ?? false,
  );
