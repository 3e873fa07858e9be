import { MethodNotAllowedError, NotFoundError } from '#lib/errors';
import type { RouteDef } from '#lib/http/route';
import type { Router } from '#lib/http/router';
import type { HttpMiddleware, HttpRequest } from '#lib/http/types';

/** Finds the route a request names: 404 for an unknown path, 405 (with `Allow`) for a wrong method. */
export const matchRoute = <T extends { def: RouteDef }>(router: Router<T>): HttpMiddleware => {
  const matchRouteBefore = async (request: HttpRequest) => {
    const method = request.event.requestContext?.http?.method?.toUpperCase() ?? 'GET';
    const path = request.event.rawPath ?? '/';
    const match = router.match(method, path);
    switch (match.kind) {
      case 'not-found':
        throw new NotFoundError(`No route for ${method} ${path}`);
      case 'method-not-allowed':
        throw new MethodNotAllowedError(match.allowed);
      case 'preflight':
        request.context.preflight = { allowed: match.allowed };
        return;
      case 'found':
        request.context.route = match.route.def;
        request.context.pathParams = match.params;
    }
  };
  return { before: matchRouteBefore };
};
