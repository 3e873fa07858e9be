import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { config, type Tier } from '#lib/config';
import { withRequestScope } from '#lib/db/request-scope';
import { locateFields } from '#lib/http/field-locations';
import { gatedPorts } from '#lib/http/gated-ports';
import { authenticate } from '#lib/http/middleware/authenticate';
import { cors } from '#lib/http/middleware/cors';
import { errorEnvelope } from '#lib/http/middleware/error-envelope';
import { jsonBody } from '#lib/http/middleware/json-body';
import { matchRoute } from '#lib/http/middleware/match-route';
import { normalizeHeaders } from '#lib/http/middleware/normalize-headers';
import { rateLimit, rateLimitHeaders } from '#lib/http/middleware/rate-limit';
import { securityHeaders } from '#lib/http/middleware/security-headers';
import { traceId } from '#lib/http/middleware/trace-id';
import { validateRequest } from '#lib/http/middleware/validate-request';
import { toResponse } from '#lib/http/respond';
import type { BodyOf, ParamsOf, QueryOf, RouteDef } from '#lib/http/route';
import { Router } from '#lib/http/router';
import type { HttpContext, HttpEvent, HttpRequest, HttpResponse } from '#lib/http/types';
import { bearerAuthenticator } from '#lib/identity/authenticator';
import type { Authenticator, ItemKey, Principal, RequestContext } from '#lib/kernel/context';
import { requestContext } from '#lib/kernel/context';

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

/** The items a route reads first, named from its path parameters and the caller's organization. */
export type FirstReads<D extends RouteDef> = (input: { params: ParamsOf<D>; orgId: string }) => ItemKey[];

export interface RouteBinding<D extends RouteDef = RouteDef> {
  def: D;
  handler: (input: RouteInput<D>) => Promise<unknown>;
  /** Domain field names that this route's request spells differently (`assignee` → `assigned_to`). */
  fields?: Record<string, string>;
  /**
   * The items the handler reads first, as the domain names them (`taskReads(orgId, id)`): read in the
   * same round trip as the caller's credential, so that the handler finds them read.
   */
  reads?: FirstReads<D>;
}

/** Binds a registry entry to the function that serves it. */
export function route<D extends RouteDef>(
  def: D,
  handler: (input: RouteInput<D>) => Promise<unknown>,
  options: { fields?: Record<string, string>; reads?: FirstReads<D> } = {},
): RouteBinding<D> {
  return { def, handler, ...options };
}

export interface GroupOptions {
  /** The adapters this group's routes use (lib/app/*), or a test's own implementations. */
  ports?: PortSpec;
  authenticator?: Authenticator;
  allowedOrigins?: string[];
  validateResponses?: boolean;
  /** Rate limits: the anonymous tier, and a tier for every caller (null: each organization's own). */
  rateLimits?: { anonymousTier?: Tier; overrideTier?: Tier | null };
}

/**
 * The Lambda handler of one endpoint group: the shared middleware stack around a router over the
 * group's routes. Built once at module scope of `functions/http/<group>.ts`; `routes` lists the
 * registry entries it serves (the binding test reads it).
 */
export type GroupHandler = ((event: HttpEvent, context: Context) => Promise<HttpResponse>) & {
  readonly routes: readonly RouteDef[];
};

/** Per-request state: the context the domain receives, made once the trace id is known. */
type WithCtx = HttpContext & { ctx?: RequestContext };

export function groupHandler(group: string, bindings: RouteBinding[], options: GroupOptions = {}): GroupHandler {
  for (const binding of bindings) {
    if (binding.def.group !== group) {
      throw new Error(`Route ${binding.def.method} ${binding.def.path} belongs to ${binding.def.group}, not ${group}`);
    }
  }
  const router = new Router(bindings);
  const byDef = new Map(bindings.map((binding) => [binding.def, binding]));
  const ports = wirePorts(options.ports);
  const validateResponses = options.validateResponses ?? config.validateResponses;
  const ctxOf = (request: HttpRequest): RequestContext => {
    const context = request.context as WithCtx;
    context.ctx ??= requestContext({
      // The handler starts before the rate limit has decided: its calls to the outside wait for it.
      ports: gatedPorts(ports, () => context.admitted),
      traceId: context.traceId,
      baseUrl: baseUrlOf(request.event),
    });
    return context.ctx;
  };
  const firstReadsOf = (request: HttpRequest) => {
    const def = request.context.route;
    const reads = def && byDef.get(def)?.reads;
    if (!def || !reads) return undefined;
    // Only well-formed parameters name items; others are answered 400 once the caller is known.
    const params = def.params ? def.params.safeParse(request.context.pathParams) : { success: true, data: undefined };
    if (!params.success) return undefined;
    return (orgId: string) => reads({ params: params.data as never, orgId });
  };

  const serve = async (event: HttpEvent, context: HttpContext): Promise<HttpResponse> => {
    if (context.preflight) return { statusCode: 204, headers: {}, body: '' };
    const def = context.route as RouteDef;
    const binding = byDef.get(def) as RouteBinding;
    const input = context.input ?? { params: undefined, query: undefined, body: undefined };
    const ctx = ctxOf({ event, context } as HttpRequest);
    const answered = binding
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
        ctx,
      } as RouteInput<RouteDef>)
      .catch((error: unknown) => {
        locateFields(error, def, binding.fields);
        throw error;
      });
    // No answer before the rate limit has decided: refused, the request answers 429 whatever the
    // handler made of it (it wrote nothing: its writes wait for the same decision).
    answered.catch(() => undefined);
    await context.admitted;
    const result = await answered;
    const response = toResponse(result, def, input.query, validateResponses);
    if (event.requestContext?.http?.method?.toUpperCase() === 'HEAD') response.body = '';
    return response;
  };

  const limiter = rateLimit({
    clock: { now: () => ports.clock.now() },
    anonymousTier: options.rateLimits?.anonymousTier ?? config.anonymousTier,
    overrideTier:
      options.rateLimits?.overrideTier === null
        ? undefined
        : (options.rateLimits?.overrideTier ?? config.rateLimitTier),
  });
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
    .use(
      authenticate(options.authenticator ?? bearerAuthenticator, {
        allowedOrigins: options.allowedOrigins ?? config.allowedOrigins,
        ctx: ctxOf,
        alsoRead: firstReadsOf,
        admit: (request, orgId) => limiter.countFor(request, orgId),
      }),
    )
    .use(limiter)
    .use(validateRequest());
  // Each request in a scope of its own: its writes wait for its admission, its reads ahead are its own.
  const scoped = (event: HttpEvent, context: Context) => withRequestScope(() => handler(event, context as never));
  // Lambda hands over a plain Context; the middleware stack fills in the HttpContext fields.
  return Object.assign(scoped, {
    routes: bindings.map((binding) => binding.def),
  }) as unknown as GroupHandler;
}

/** `https://host/api` as the caller reached this deployment (for links sent by email). */
function baseUrlOf(event: HttpEvent): string {
  const proto = event.headers['x-forwarded-proto']?.split(',')[0]?.trim() ?? 'http';
  const host = event.headers.host ?? event.requestContext?.domainName ?? 'localhost';
  return `${proto}://${host}/api`;
}
