import type { Principal } from '#lib/context';
import { AppError, UnauthorizedError } from '#lib/errors';
import type { RouteDef } from '#lib/http/route';
import type { HttpEvent, HttpMiddleware, HttpRequest } from '#lib/http/types';
import { logger } from '#lib/logger';

/**
 * Resolves the caller of a `bearer` route from its request (JWT, `service_jwt` cookie or API key), or
 * throws UnauthorizedError / ForbiddenError. `signature` routes verify their signature in their domain
 * code, which needs the raw body and the organization's secrets.
 */
export interface Authenticator {
  authenticate(event: HttpEvent, route: RouteDef): Promise<Principal>;
  /** Called once the response is known, e.g. to append an API key's usage record. */
  completed?(principal: Principal, route: RouteDef, status: number): Promise<void>;
}

/** The authenticator a group uses when none is wired: no credential is accepted. */
export const rejectAllCredentials: Authenticator = {
  authenticate: async () => {
    throw new UnauthorizedError();
  },
};

export const authenticate = (authenticator: Authenticator): HttpMiddleware => {
  const authenticateBefore = async (request: HttpRequest) => {
    const route = request.context.route;
    if (route?.auth !== 'bearer') return;
    request.context.principal = await authenticator.authenticate(request.event, route);
  };
  const report = async (request: HttpRequest, status: number) => {
    const { principal, route } = request.context;
    if (!principal || !route || !authenticator.completed) return;
    try {
      await authenticator.completed(principal, route, status);
    } catch (error) {
      // Bookkeeping never turns an answered request into a failure.
      logger.warn('recording credential use failed', { error: error as Error });
    }
  };
  const authenticateAfter = async (request: HttpRequest) =>
    report(request, request.response?.statusCode ?? 200);
  const authenticateOnError = async (request: HttpRequest) =>
    report(request, request.error instanceof AppError && request.error.expose ? request.error.status : 500);
  return { before: authenticateBefore, after: authenticateAfter, onError: authenticateOnError };
};
