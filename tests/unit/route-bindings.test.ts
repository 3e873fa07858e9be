import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readServerlessFunctions } from '#infra/local/serverless-routes';
import type { GroupHandler } from '#lib/http/group-handler';
import type { RouteDef } from '#lib/http/route';
import { allRoutes } from '#lib/routes/index';

/**
 * Every registry route is served by a binding in its group's function, and every binding serves a
 * registry route: a route whose binding is deleted, or a binding to a definition the registry (and so
 * the OpenAPI document) does not list, fails here.
 */
const label = (route: RouteDef) => `${route.method} ${route.path}`;

const httpFunctions = readServerlessFunctions().filter((fn) => fn.module.startsWith('functions/http/'));

async function servedBy(group: string): Promise<readonly RouteDef[]> {
  const fn = httpFunctions.find((candidate) => candidate.group === group);
  if (!fn) return [];
  const module = await import(pathToFileURL(resolve(`${fn.module}.ts`)).href);
  return (module[fn.exportName] as GroupHandler).routes;
}

describe('route bindings', () => {
  it.each(allRoutes.map((route) => [label(route), route] as const))(
    'binds %s in its group function',
    async (_name, route) => {
      expect((await servedBy(route.group)).includes(route)).toBe(true);
    },
  );

  it.each(httpFunctions.map((fn) => [fn.name, fn.group] as const))(
    'binds nothing in %s that the registry does not list',
    async (_name, group) => {
      const unknown = (await servedBy(group)).filter((def) => !allRoutes.includes(def)).map(label);
      expect(unknown).toEqual([]);
    },
  );
});
