import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { HttpMethod, RouteDef } from '#lib/http/route';
import type { Principal } from '#lib/kernel/context';
import type { RateState, Tally } from '#lib/rate-limit/limiter';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResponse = APIGatewayProxyStructuredResultV2 & {
  headers: Record<string, string | number | boolean>;
};

/** Per-request state the middleware stack shares, carried on the Lambda context object. */
export interface HttpContext extends Context {
  traceId: string;
  route?: RouteDef;
  preflight?: { allowed: HttpMethod[] };
  pathParams: Record<string, string>;
  rawBody?: string;
  body?: unknown;
  input?: { params: unknown; query: unknown; body: unknown };
  principal?: Principal;
  rateLimit?: RateState;
  /** The count of this request, once sent (undefined inside: the counter could not be written). */
  tally?: Promise<Tally | undefined>;
  /** Settles once the rate limit has decided; rejects with the 429 when it refused the request. */
  admitted?: Promise<void>;
  /** The counter could not be written; the request went unlimited. */
  rateLimitSkipped?: boolean;
}

export type HttpRequest = Request<HttpEvent, HttpResponse, Error, HttpContext>;
export type HttpMiddleware = MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext>;

/** Sets a response header, creating the header map when needed. */
export function setHeader(response: HttpResponse | null | undefined, name: string, value: string): void {
  if (!response) return;
  response.headers ??= {};
  response.headers[name] = value;
}

export function hasHeader(response: HttpResponse | null | undefined, name: string): boolean {
  const lower = name.toLowerCase();
  return Object.keys(response?.headers ?? {}).some((key) => key.toLowerCase() === lower);
}
