/**
 * What a route function may return besides a plain value (which answers `200 { data: value }`).
 */
export interface ListMeta {
  total: number;
  limit: number;
  offset: number;
}

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

/** `200 { data }` that also sets cookies. */
export const withCookies = (data: unknown, cookies: string[], status = 200): HttpResult =>
  new HttpResult(status, { data }, {}, false, false, cookies);

export const created = (data: unknown, headers: Record<string, string> = {}): HttpResult =>
  new HttpResult(201, { data }, headers);

export const accepted = (data: unknown): HttpResult => new HttpResult(202, { data });

export const listOf = (items: unknown[], meta: ListMeta): HttpResult =>
  new HttpResult(200, { data: items, meta });

export const deleted = (data: unknown, meta: Record<string, unknown> = {}): HttpResult =>
  new HttpResult(200, { data, meta: { deleted: true, ...meta } });

export const withStatus = (status: number, data: unknown): HttpResult => new HttpResult(status, { data });

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
