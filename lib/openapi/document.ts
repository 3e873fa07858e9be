import { OpenAPIRegistry, OpenApiGeneratorV3, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import { type RouteDef, requiredPermission } from '#lib/http/route';
import { ErrorEnvelope, EstimatedListMetaSchema, ListMetaSchema } from '#lib/openapi/envelopes';
import { typeEveryNullable } from '#lib/openapi/nullable';
import { patternsWithoutFlags } from '#lib/openapi/patterns';
import { APP_VERSION } from '#lib/version';

/**
 * Builds the OpenAPI 3.0 document from the route registry, so the document describes exactly the
 * routes the functions serve. Decisions the specification leaves open are written into `description`s.
 */

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: VALIDATION_ERROR (details `[{ path, message }]`) or INVALID_JSON',
  401: 'UNAUTHORIZED: missing or invalid credential',
  402: 'PAYMENT_REQUIRED: insufficient token balance',
  403: 'FORBIDDEN: the credential lacks the permission',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED (with an `Allow` header)',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE: bodies are limited to 1 MiB',
  422: 'UNPROCESSABLE',
  429: 'RATE_LIMITED (with `Retry-After`)',
  500: 'INTERNAL_ERROR: no internals are disclosed; quote the X-Trace-Id',
  503: 'SERVICE_UNAVAILABLE: the database cannot be reached or is overloaded; retry after `Retry-After` seconds',
};

/** What each error status answers, as a client sees it: its own code, never another status's. */
const ERROR_EXAMPLES: Record<number, { code: string; message: string; details: unknown[] }> = {
  400: {
    code: 'VALIDATION_ERROR',
    message: 'The request is not valid',
    details: [{ path: 'body.name', message: 'Required' }],
  },
  401: { code: 'UNAUTHORIZED', message: 'Authentication required', details: [] },
  402: { code: 'PAYMENT_REQUIRED', message: 'Insufficient token balance', details: [] },
  403: { code: 'FORBIDDEN', message: 'You do not have permission to do this', details: [] },
  404: { code: 'NOT_FOUND', message: 'Not found', details: [] },
  405: {
    code: 'METHOD_NOT_ALLOWED',
    message: 'Method not allowed; allowed: GET',
    details: [{ path: 'method', message: 'GET is allowed' }],
  },
  409: { code: 'CONFLICT', message: 'The record was changed by another request; try again', details: [] },
  413: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than 1048576 bytes', details: [] },
  422: { code: 'UNPROCESSABLE', message: 'The request cannot be processed', details: [] },
  429: { code: 'RATE_LIMITED', message: 'Rate limit exceeded', details: [] },
  500: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred', details: [] },
  503: {
    code: 'SERVICE_UNAVAILABLE',
    message: 'The database is unavailable; try again shortly',
    details: [],
  },
};

const API_DESCRIPTION = [
  'JSON REST API that runs automated agents and the work they do.',
  '',
  '**Conventions**',
  '- Every route is served under `/api` and under the alias `/api/v1` (public API routes, whose paths already ' +
    'begin with `/v1/public`, are served at `/api/v1/public/…`).',
  '- Success bodies are `{ data }`, lists `{ data, meta: { total, limit, offset } }`, deletions ' +
    '`{ data, meta }`; errors `{ error: { code, message, details } }`. Outside the envelope: `/docs`, ' +
    '`/docs/openapi.json` and file downloads.',
  "- Every response carries `X-Trace-Id`: the caller's own when it sent a sane one (1–128 characters of " +
    'letters, digits and `._:-`), otherwise a new UUID.',
  '- Paging: `limit` defaults to 50 and is clamped to 200; `offset` defaults to 0; anything that is not a ' +
    'non-negative integer is a 400.',
  '- Request bodies are JSON whatever the Content-Type says, at most 1 MiB (413 above) and at most 24 levels ' +
    'deep (400 above). Their numbers are 0 or between 1e-130 and 9007199254740991 (2^53 − 1) in magnitude, ' +
    'what the database stores and reads back as sent, and their strings and keys are well-formed Unicode (no ' +
    'unpaired surrogate, which has no UTF-8 form) (400 otherwise). Free-form objects the service stores ' +
    '(metadata) say their own depth and size limits.',
  '- Error codes: VALIDATION_ERROR, INVALID_JSON (400), UNAUTHORIZED (401), PAYMENT_REQUIRED (402), FORBIDDEN ' +
    '(403), NOT_FOUND (404, also unknown routes), METHOD_NOT_ALLOWED (405), CONFLICT (409), PAYLOAD_TOO_LARGE ' +
    '(413), UNPROCESSABLE (422), RATE_LIMITED (429), INTERNAL_ERROR (500), SERVICE_UNAVAILABLE (503).',
  '- Any route that reads or writes data answers 503 SERVICE_UNAVAILABLE with `Retry-After` when the database ' +
    "cannot be reached or is throttling after the service's own retries; nothing was changed, so the request " +
    'can be sent again.',
  "- Rate limits: per organization (its tier's limits), or per source IP without a credential, in fixed " +
    'minute and hour windows; every response carries `X-RateLimit-Limit`, `-Remaining` and `-Reset` (epoch ' +
    'seconds) for the window with the fewest requests left (on task creation, its own limit of 30 a minute ' +
    'counts as a window too), and a 429 carries `Retry-After`.',
  '- CORS is answered for the origins in ALLOWED_ORIGINS only, with credentials.',
  '',
  '**Authentication and tenancy**',
  '- Credentials: an access JWT from POST /auth/login (HS256, one hour) as `Authorization: Bearer`, the ' +
    '`service_jwt` cookie (set by login; HttpOnly, SameSite=Lax, Secure over HTTPS), or an organization API key ' +
    '(`osk_live_…`). A missing or invalid credential is 401, with the challenge `WWW-Authenticate: Bearer ' +
    'realm="agent-operations"` (and `error="invalid_token"` when one was presented); a valid one lacking the ' +
    'permission is 403, as is an API key on a route that needs a user.',
  '- Refresh tokens (30 days) rotate at POST /auth/refresh; presenting a spent one again revokes every token ' +
    'of that login. Logout ends the session at once: its access token and its refresh tokens (other ' +
    'sessions of the user go on); `all_devices` revokes every token of the user.',
  '- A cookie-authenticated POST, PUT, PATCH or DELETE needs an Origin from ALLOWED_ORIGINS or an ' +
    'X-Requested-With header (403 otherwise).',
  "- A request acts in one organization: an API key's own; for a token, the organization it was issued for, " +
    'or the one named by `X-Organization-Id` (the caller must be a member: 403 otherwise). Records of another ' +
    'organization answer 404.',
  '- Permissions: GET routes need `read`, other methods `write`, unless a route says otherwise. API key scopes ' +
    "are `read`, `write` (implies read) and `admin` (implies both). A user's permission is the lesser of the " +
    'instance role (admin: all; editor, builder, member, agent: write; viewer, demo: read) and the organization ' +
    'role (owner, admin: all; member: write; viewer: read); instance admins have all.',
  '- Failed logins: after 10 failures of one email from one source address, that pair waits 1 minute, and ' +
    'each further failure doubles the wait (at most 15 minutes; a success or a day without failures starts ' +
    'over), while the same email from another address is unaffected. 100 failures of one email from all ' +
    'addresses together, or 50 from one address whatever the emails, within 15 minutes close logins for the ' +
    'rest of that window. Refused logins answer 429 with Retry-After before any password is checked.',
  '- Passwords are hashed with scrypt (N = 2^17, r = 8, p = 1 by default); a hash made with weaker ' +
    'parameters is replaced at the next successful login.',
].join('\n');

export function buildOpenApiDocument(routes: RouteDef[]) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An access JWT from POST /auth/login, or an organization API key (`osk_live_…`).',
  });
  registry.registerComponent('securitySchemes', 'cookieAuth', {
    type: 'apiKey',
    in: 'cookie',
    name: 'service_jwt',
    description: 'Set by POST /auth/login for browser clients.',
  });
  for (const route of routes) registry.registerPath(toPathConfig(route));

  const generator = new OpenApiGeneratorV3(registry.definitions);
  return patternsWithoutFlags(
    typeEveryNullable(
      generator.generateDocument({
        openapi: '3.0.3',
        info: { title: 'Agent Operations Service', version: APP_VERSION, description: API_DESCRIPTION },
        servers: [
          { url: '/api', description: 'This deployment' },
          { url: '/api/v1', description: 'Versioned alias of /api' },
        ],
      }),
    ),
  );
}

function toPathConfig(route: RouteDef): RouteConfig {
  const successStatus = route.status ?? 200;
  const responses: RouteConfig['responses'] = {
    [successStatus]: successResponse(route),
  };
  for (const status of route.alsoAnswers ?? []) {
    responses[status] = {
      ...successResponse(route),
      description: `${ERROR_DESCRIPTIONS[status] ?? ''}; same body`,
    };
  }
  for (const status of errorStatuses(route)) {
    if (responses[status]) continue;
    responses[status] = {
      description: ERROR_DESCRIPTIONS[status] ?? 'Error',
      content: { 'application/json': { schema: ErrorEnvelope, example: { error: errorExample(status) } } },
    };
  }
  return {
    method: route.method.toLowerCase() as RouteConfig['method'],
    path: route.path,
    summary: route.summary,
    ...(describe(route) ? { description: describe(route) } : {}),
    tags: route.tags,
    operationId: operationId(route),
    ...(route.auth === 'bearer' ? { security: [{ bearerAuth: [] }, { cookieAuth: [] }] } : { security: [] }),
    request: {
      ...(route.params ? { params: route.params as z.ZodObject } : {}),
      ...(route.query ? { query: route.query as z.ZodObject } : {}),
      ...(route.body
        ? { body: { required: bodyRequired(route.body), content: { 'application/json': { schema: route.body } } } }
        : {}),
    },
    responses,
  };
}

/**
 * A body declared `.optional()` may be left out (POST /auth/logout, the agent controls): the document says
 * so, or a client would be told to send what the service does not need. Other bodies are required, those
 * a route's domain checks itself (the signed webhooks' payloads) included.
 */
const bodyRequired = (body: z.ZodType): boolean => !(body instanceof z.ZodOptional);

const errorExample = (status: number) =>
  ERROR_EXAMPLES[status] ?? { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred', details: [] };

/** The route's own description, with the permission a bearer caller needs. */
function describe(route: RouteDef): string | undefined {
  if (route.rateLimited === false) {
    const free = 'Not rate limited, so that uptime monitors and load balancers can poll it; no X-RateLimit headers.';
    return route.description ? `${route.description}\n\n${free}` : free;
  }
  if (route.auth !== 'bearer') return route.description;
  const needs = `Needs the \`${requiredPermission(route)}\` permission.`;
  return route.description ? `${route.description}\n\n${needs}` : needs;
}

function successResponse(route: RouteDef) {
  const data = route.response ?? z.object({});
  const envelope = route.envelope ?? 'item';
  if (envelope === 'raw') {
    const types = [route.contentType ?? 'application/octet-stream'].flat();
    const schemaOf = (type: string) =>
      type.startsWith('application/json') && route.response ? route.response : z.string();
    return {
      description: route.summary,
      content: Object.fromEntries(types.map((type) => [type, { schema: schemaOf(type) }])),
    };
  }
  const schema =
    envelope === 'list'
      ? z.object({
          data: z.array(data),
          meta: route.listMeta === 'estimated' ? EstimatedListMetaSchema : ListMetaSchema,
        })
      : envelope === 'deleted'
        ? z.object({ data, meta: z.record(z.string(), z.unknown()) })
        : z.object({ data });
  return { description: route.summary, content: { 'application/json': { schema } } };
}

function errorStatuses(route: RouteDef): number[] {
  const statuses = new Set<number>(route.rateLimited === false ? [405, 500] : [405, 429, 500]);
  if (route.params || route.query) statuses.add(400);
  // A write without a body schema still refuses a body that is not JSON, or one over the size limit.
  if (route.body || route.method !== 'GET') {
    statuses.add(400);
    statuses.add(413);
  }
  if (route.auth !== 'none') statuses.add(401);
  if (route.startsSession) statuses.add(403);
  if (route.auth === 'bearer') {
    statuses.add(403);
    // Authenticating reads the table, so every bearer route answers 503 while the database is down.
    statuses.add(503);
  }
  if (route.params) statuses.add(404);
  for (const status of route.errors ?? []) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

/** `GET /agent-pipelines/{id}/executions` → `getAgentPipelinesIdExecutions`. */
function operationId(route: RouteDef): string {
  const words = route.path
    .split('/')
    .filter(Boolean)
    .flatMap((part) => part.replace(/[{}]/g, '').split(/[^A-Za-z0-9]+/))
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return route.method.toLowerCase() + words.join('');
}
