import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readServerlessRoutes, selectRoute } from '#infra/local/serverless-routes';
import type { RouteDef } from '#lib/http/route';
import { Router } from '#lib/http/router';
import { buildOpenApiDocument } from '#lib/openapi/document';
import { allRoutes } from '#lib/routes/index';

const apiRoutes = readServerlessRoutes();

/** A concrete request path for a route template: `/tasks/{id}` → `/tasks/sample-id`. */
const concrete = (template: string) => template.replace(/\{(\w+)\}/g, 'sample-$1');

/** Public API paths already start with /v1 and are not aliased again. */
const prefixesOf = (route: RouteDef) => (route.path.startsWith('/v1/') ? ['/api'] : ['/api', '/api/v1']);

const label = (route: RouteDef) => `${route.method} ${route.path}`;

describe('the route registry, serverless.yml and the OpenAPI document', () => {
  it('has at least the service and docs routes', () => {
    expect(allRoutes.map(label)).toEqual(expect.arrayContaining(['GET /health', 'GET /docs/openapi.json']));
  });

  it.each(allRoutes.map((route) => [label(route), route] as const))(
    'routes %s to its own group function under every prefix',
    (_name, route) => {
      const groupRouter = new Router(allRoutes.filter((other) => other.group === route.group).map((def) => ({ def })));
      for (const prefix of prefixesOf(route)) {
        const path = prefix + concrete(route.path);
        const selected = selectRoute(apiRoutes, route.method, path);
        expect(selected?.route.fn.group, `API Gateway route for ${route.method} ${path}`).toBe(route.group);
        const inGroup = groupRouter.match(route.method, path);
        expect(inGroup.kind === 'found' && inGroup.route.def, `group router for ${path}`).toBe(route);
      }
    },
  );

  it('declares no API Gateway route that serves no registry route', () => {
    const used = new Set<string>();
    for (const route of allRoutes) {
      for (const prefix of prefixesOf(route)) {
        const selected = selectRoute(apiRoutes, route.method, prefix + concrete(route.path));
        if (selected) used.add(`${selected.route.fn.name} ${selected.route.method} ${selected.route.path}`);
      }
    }
    const unused = apiRoutes
      .filter((route) => !route.isDefault)
      .map((route) => `${route.fn.name} ${route.method} ${route.path}`)
      .filter((key) => !used.has(key));
    expect(unused).toEqual([]);
  });

  it('sends every other path to the not-found function', () => {
    const selected = selectRoute(apiRoutes, 'GET', '/api/no-such-thing');
    expect(selected?.route.isDefault).toBe(true);
    expect(selected?.route.fn.group).toBe('not-found');
  });

  it('has a handler file for every function', () => {
    const modules = new Set(apiRoutes.map((route) => route.fn.module));
    for (const module of modules) expect(existsSync(`${module}.ts`), module).toBe(true);
  });

  it('documents exactly the registry routes in the OpenAPI document', () => {
    const document = buildOpenApiDocument(allRoutes);
    const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.keys(item as object)
        .filter((key) => ['get', 'post', 'put', 'patch', 'delete'].includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(allRoutes.map(label).sort());
  });

  it('declares each method and path once', () => {
    const labels = allRoutes.map(label);
    expect(new Set(labels).size).toBe(labels.length);
  });
});

describe('API Gateway route selection (local gateway)', () => {
  const routes = [
    { method: 'ANY', path: '/api/items/{proxy+}', fn: 'greedy' },
    { method: 'ANY', path: '/api/items/{id}', fn: 'param' },
    { method: 'GET', path: '/api/items/special', fn: 'exact-get' },
    { method: 'ANY', path: '/api/items/special', fn: 'exact-any' },
  ].map((route) => ({
    method: route.method,
    path: route.path,
    isDefault: false,
    fn: { name: route.fn, module: route.fn, exportName: 'handler', group: route.fn },
  }));
  const withDefault = [
    ...routes,
    {
      method: 'ANY',
      path: '$default',
      isDefault: true,
      fn: { name: 'd', module: 'd', exportName: 'handler', group: 'd' },
    },
  ];

  it.each([
    ['GET', '/api/items/special', 'exact-get'],
    ['POST', '/api/items/special', 'exact-any'],
    ['GET', '/api/items/42', 'param'],
    ['GET', '/api/items/42/parts', 'greedy'],
    ['GET', '/api/items', 'd'],
    ['GET', '/elsewhere', 'd'],
  ])('sends %s %s to %s', (method, path, expected) => {
    expect(selectRoute(withDefault, method, path)?.route.fn.name).toBe(expected);
  });

  it('gives greedy routes the rest of the path as their parameter', () => {
    expect(selectRoute(routes, 'GET', '/api/items/42/parts')?.pathParameters).toEqual({ proxy: '42/parts' });
  });
});
