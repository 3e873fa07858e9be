import { AppError, ForbiddenError, UnauthorizedError } from '#lib/errors';
import { requiredPermission } from '#lib/http/route';
import type { HttpEvent, HttpMiddleware, HttpRequest } from '#lib/http/types';
import { API_KEY_PREFIX } from '#lib/identity/api-key-format';
import { assertAllowed } from '#lib/identity/authenticator';
import type { Authenticator, Caller, Credential, ItemKey, Principal, RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';

export const SESSION_COOKIE = 'service_jwt';
/** The protection space a bearer challenge names. */
const REALM = 'agent-operations';
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Resolves the caller of a `bearer` route. This layer reads the request: an `Authorization: Bearer`
 * JWT or API key (`osk_live_…`), else the `service_jwt` cookie, and `X-Organization-Id`; identity turns
 * that credential into a principal. The HTTP concerns stay here: a cookie-authenticated change must
 * come from an allowed Origin or carry X-Requested-With (CSRF), and the route's permission is checked
 * against the principal. `signature` routes verify their signature in their domain code.
 */
export const authenticate = (
  authenticator: Authenticator,
  options: {
    allowedOrigins: string[];
    ctx: (request: HttpRequest) => RequestContext;
    /** The items the route reads first, by the caller's organization (none when it names none). */
    alsoRead?: (request: HttpRequest) => ((orgId: string) => ItemKey[]) | undefined;
    /** Starts the admission of a caller proven to act in `orgId` (the rate-limit count). */
    admit?: (request: HttpRequest, orgId: string) => void;
  },
): HttpMiddleware => {
  const allowedOrigins = new Set(options.allowedOrigins);
  const authenticateBefore = async (request: HttpRequest) => {
    const route = request.context.route;
    if (route?.startsSession) requireKnownOrigin(request.event, allowedOrigins);
    if (route?.auth !== 'bearer') return;
    const ctx = options.ctx(request);
    const needed = requiredPermission(route);
    let credential: Credential;
    let principal: Principal;
    try {
      credential = credentialOf(request.event);
      const kind = credential.kind;
      // Refusals that need only the caller come before anything else is read or counted for it.
      const admitted = (caller: Caller) => {
        if (kind === 'cookie') requireSameSite(request.event, allowedOrigins);
        assertAllowed(caller, needed);
        options.admit?.(request, caller.orgId);
      };
      const alsoRead = options.alsoRead?.(request);
      principal = await authenticator.authenticate(ctx, credential, {
        admitted,
        ...(alsoRead ? { alsoRead } : {}),
        use: { method: route.method, route: route.path, status: route.status ?? 200 },
      });
    } catch (error) {
      throw error instanceof UnauthorizedError ? challenged(error, request.event) : error;
    }
    if (credential.kind === 'cookie') requireSameSite(request.event, allowedOrigins);
    assertAllowed(principal, needed);
    request.context.principal = principal;
    ctx.principal = principal;
  };
  const report = async (request: HttpRequest, status: number) => {
    const { principal, route } = request.context;
    if (!principal || !route || !authenticator.completed) return;
    try {
      await authenticator.completed(options.ctx(request), principal, {
        method: route.method,
        route: route.path,
        status,
      });
    } catch (error) {
      // Bookkeeping never turns an answered request into a failure.
      logger.warn('recording credential use failed', { org_id: principal.orgId, error: error as Error });
    }
  };
  const authenticateAfter = async (request: HttpRequest) => report(request, request.response?.statusCode ?? 200);
  const authenticateOnError = async (request: HttpRequest) =>
    report(request, request.error instanceof AppError && request.error.expose ? request.error.status : 500);
  return { before: authenticateBefore, after: authenticateAfter, onError: authenticateOnError };
};

/** The credential a request presents; 401 when it presents none or a malformed one. */
function credentialOf(event: HttpEvent): Credential {
  const organizationId = event.headers['x-organization-id'];
  const scope = organizationId !== undefined ? { organizationId } : {};
  const header = event.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new UnauthorizedError('Invalid or expired credential');
    const value = match[1] as string;
    return { kind: value.startsWith(API_KEY_PREFIX) ? 'api_key' : 'jwt', value, ...scope };
  }
  const cookie = readCookie(event.cookies ?? [], SESSION_COOKIE);
  if (!cookie) throw new UnauthorizedError();
  return { kind: 'cookie', value: cookie, ...scope };
}

/**
 * The same refusal with the bearer challenge that every 401 must carry (RFC 9110 §11.6.1), in RFC 6750's
 * form: `error="invalid_token"` when a credential was presented, no error when there was none.
 */
function challenged(error: UnauthorizedError, event: HttpEvent): UnauthorizedError {
  const presented = event.headers.authorization !== undefined || readCookie(event.cookies ?? [], SESSION_COOKIE);
  const challenge = `Bearer realm="${REALM}"${presented ? ', error="invalid_token"' : ''}`;
  return new UnauthorizedError(error.message, { ...error.headers, 'WWW-Authenticate': challenge });
}

function requireSameSite(event: HttpEvent, allowedOrigins: Set<string>): void {
  const method = event.requestContext?.http?.method?.toUpperCase() ?? 'GET';
  if (!STATE_CHANGING.has(method)) return;
  const origin = event.headers.origin;
  if (origin !== undefined ? allowedOrigins.has(origin) : event.headers['x-requested-with'] !== undefined) return;
  throw new ForbiddenError('Cookie-authenticated changes need an allowed Origin or an X-Requested-With header');
}

/** A session is started for a browser only from an allowed Origin; a request without one is not a browser's. */
function requireKnownOrigin(event: HttpEvent, allowedOrigins: Set<string>): void {
  const origin = event.headers.origin;
  if (origin === undefined || allowedOrigins.has(origin)) return;
  throw new ForbiddenError('A session can be started from an allowed Origin only');
}

function readCookie(cookies: string[], name: string): string | undefined {
  for (const cookie of cookies) {
    const index = cookie.indexOf('=');
    if (index > 0 && cookie.slice(0, index).trim() === name) return cookie.slice(index + 1).trim();
  }
  return undefined;
}
