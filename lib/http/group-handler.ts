import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Clock, EmailSender } from '#lib/adapters/ports';
import { config, type Tier } from '#lib/config';
import type { Principal, RequestContext } from '#lib/context';
import { locateFields } from '#lib/http/field-locations';
import { type Authenticator, authenticate } from '#lib/http/middleware/authenticate';
import { cors } from '#lib/http/middleware/cors';
import { errorEnvelope } from '#lib/http/middleware/error-envelope';
import { jsonBody } from '#lib/http/middleware/json-body';
import { matchRoute } from '#lib/http/middleware/match-route';
import { normalizeHeaders } from '#lib/http/middleware/normalize-headers';
import { rateLimit, rateLimitHeaders } from '#lib/http/middleware/rate-limit';
import { securityHeaders } from '#lib/http/middleware/security-headers';
import { traceId } from '#lib/http/middleware/trace-id';
import { validateRequest } from '#lib/http/middleware/validate-request';
import { HttpResult } from '#lib/http/results';
import type { BodyOf, ParamsOf, QueryOf, RouteDef } from '#lib/http/route';
import { Router } from '#lib/http/router';
import type { HttpContext, HttpEvent, HttpResponse } from '#lib/http/types';
import * as wiring from '#lib/wiring';

export interface RouteInput<D extends RouteDef> {
  params: ParamsOf<D>;
  query: QueryOf<D>;
  body: BodyOf<D>;
  /** The body exactly as received, for signature checks. */
  rawBody: string | undefined;
  /** The request path as received (`/api/...` or `/api/v1/...`). */
  path: string;
  headers: Record<string, string>;
  cookies: string[];
  sourceIp: string;
  principal: Principal | undefined;
  ctx: RequestContext;
}

export interface RouteBinding<D extends RouteDef = RouteDef> {
  def: D;
  handler: (input: RouteInput<D>) => Promise<unknown>;
  /** Domain field names that this route's request spells differently (`assignee` → `assigned_to`). */
  fields?: Record<string, string>;
}

/** Binds a registry entry to the function that serves it. */
export function route<D extends RouteDef>(
  def: D,
  handler: (input: RouteInput<D>) => Promise<unknown>,
  options: { fields?: Record<string, string> } = {},
): RouteBinding<D> {
  return { def, handler, ...options };
}

export interface GroupOptions {
  authenticator?: Authenticator;
  clock?: Clock;
  email?: EmailSender;
  allowedOrigins?: string[];
  validateResponses?: boolean;
  /** Rate limits: the anonymous tier, and a tier for every caller (null: each organization's own). */
  rateLimits?: { anonymousTier?: Tier; overrideTier?: Tier | null };
}

/**
 * The Lambda handler of one endpoint group: the shared middleware stack around a router over the
 * group's routes. Built once at module scope of `functions/http/<group>.ts`.
 */
export type GroupHandler = (event: HttpEvent, context: Context) => Promise<HttpResponse>;

export function groupHandler(
  group: string,
  bindings: RouteBinding[],
  options: GroupOptions = {},
): GroupHandler {
  for (const binding of bindings) {
    if (binding.def.group !== group) {
      throw new Error(
        `Route ${binding.def.method} ${binding.def.path} belongs to ${binding.def.group}, not ${group}`,
      );
    }
  }
  const router = new Router(bindings);
  const handlers = new Map(bindings.map((binding) => [binding.def, binding]));
  const clock = options.clock ?? wiring.clock;
  const authenticator = options.authenticator ?? wiring.defaultAuthenticator(clock);
  const validateResponses = options.validateResponses ?? config.validateResponses;

  const serve = async (event: HttpEvent, context: HttpContext): Promise<HttpResponse> => {
    if (context.preflight) return { statusCode: 204, headers: {}, body: '' };
    const def = context.route as RouteDef;
    const binding = handlers.get(def) as RouteBinding;
    const input = context.input ?? { params: undefined, query: undefined, body: undefined };
    const result = await binding
      .handler({
        params: input.params,
        query: input.query,
        body: input.body,
        rawBody: context.rawBody,
        path: event.rawPath,
        headers: event.headers as Record<string, string>,
        cookies: event.cookies ?? [],
        sourceIp: event.requestContext?.http?.sourceIp ?? '0.0.0.0',
        principal: context.principal,
        ctx: {
          traceId: context.traceId,
          principal: context.principal,
          clock,
          email: options.email ?? wiring.emailSender(),
          baseUrl: baseUrlOf(event),
        },
      } as RouteInput<RouteDef>)
      .catch((error: unknown) => {
        locateFields(error, def, binding.fields);
        throw error;
      });
    const response = toResponse(result, def, validateResponses);
    if (event.requestContext?.http?.method?.toUpperCase() === 'HEAD') response.body = '';
    return response;
  };

  const handler = middy<HttpEvent, HttpResponse, Error, HttpContext>(serve)
    .use(normalizeHeaders())
    .use(traceId())
    .use(securityHeaders())
    .use(cors({ allowedOrigins: options.allowedOrigins ?? config.allowedOrigins }))
    .use(rateLimitHeaders())
    .use(errorEnvelope())
    // Every body this API takes is JSON, so a malformed one is refused before routing (400 before 404/405).
    .use(jsonBody())
    .use(matchRoute(router))
    .use(authenticate(authenticator))
    .use(
      rateLimit({
        clock,
        anonymousTier: options.rateLimits?.anonymousTier ?? config.anonymousTier,
        overrideTier:
          options.rateLimits?.overrideTier === null
            ? undefined
            : (options.rateLimits?.overrideTier ?? config.rateLimitTier),
      }),
    )
    .use(validateRequest());
  // Lambda hands over a plain Context; the middleware stack fills in the HttpContext fields.
  return handler as unknown as GroupHandler;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** `https://host/api` as the caller reached this deployment (for links sent by email). */
function baseUrlOf(event: HttpEvent): string {
  const proto = event.headers['x-forwarded-proto']?.split(',')[0]?.trim() ?? 'http';
  const host = event.headers.host ?? event.requestContext?.domainName ?? 'localhost';
  return `${proto}://${host}/api`;
}

function toResponse(result: unknown, def: RouteDef, validate: boolean): HttpResponse {
  const outcome = result instanceof HttpResult ? result : new HttpResult(def.status ?? 200, { data: result });
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
