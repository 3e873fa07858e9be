import type { RouteDef } from '#lib/http/route';
import * as docs from '#lib/routes/docs';
import * as service from '#lib/routes/service';

/**
 * The route registry: every route of the API. It feeds each group's router, the OpenAPI document and
 * the test that compares them with serverless.yml.
 */
const isRoute = (value: unknown): value is RouteDef =>
  typeof value === 'object' && value !== null && 'method' in value && 'path' in value && 'group' in value;

const routesOf = (module: Record<string, unknown>): RouteDef[] => Object.values(module).filter(isRoute);

export const allRoutes: RouteDef[] = [...routesOf(service), ...routesOf(docs)];
