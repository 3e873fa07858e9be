import type { Principal } from '#lib/context';
import { UnauthorizedError } from '#lib/errors';
import type { RouteDef } from '#lib/http/route';
import type { HttpEvent, HttpMiddleware, HttpRequest } from '#lib/http/types';

/**
 * Resolves the caller of a `bearer` route from its request (JWT, `service_jwt` cookie or API key) or
 * throws UnauthorizedError / ForbiddenError. `signature` routes verify their signature in their domain
 * code, which needs the raw body and the organization's secrets.
 */
export type Authenticator = (event: HttpEvent, route: RouteDef) => Promise<Principal>;

/** The authenticator a group uses when none is wired: no credential is accepted. */
export const rejectAllCredentials: Authenticator = async () => {
  throw new UnauthorizedError();
};

export const authenticate = (authenticator: Authenticator): HttpMiddleware => {
  const authenticateBefore = async (request: HttpRequest) => {
    const route = request.context.route;
    if (route?.auth !== 'bearer') return;
    request.context.principal = await authenticator(request.event, route);
  };
  return { before: authenticateBefore };
};
