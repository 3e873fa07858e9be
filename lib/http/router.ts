import { ValidationError } from '#lib/errors';
import type { HttpMethod, RouteDef } from '#lib/http/route';

/**
 * Matches a request path against the routes of one group. Paths arrive as API Gateway sends them
 * (`rawPath`), under `/api` or under its alias `/api/v1`.
 */

export const API_PREFIX = '/api';
export const VERSION_ALIAS = '/v1';

type Segment = { literal: string } | { param: string };

interface CompiledPath<T> {
  template: string;
  segments: Segment[];
  byMethod: Map<HttpMethod, T>;
}

export type RouteMatch<T> =
  | { kind: 'found'; route: T; params: Record<string, string>; template: string }
  | { kind: 'method-not-allowed'; allowed: HttpMethod[]; template: string }
  | { kind: 'preflight'; allowed: HttpMethod[]; template: string }
  | { kind: 'not-found' };

const compileSegments = (template: string): Segment[] =>
  splitPath(template).map((part) => {
    const param = /^\{(\w+)\}$/.exec(part);
    return param ? { param: param[1] as string } : { literal: part };
  });

const splitPath = (path: string): string[] => path.split('/').filter((part) => part.length > 0);

/** Literal segments outrank parameters, left to right: `/users/me` wins over `/users/{id}`. */
const specificity = (segments: Segment[]): string =>
  segments.map((segment) => ('literal' in segment ? '1' : '0')).join('');

const compareDescending = (a: string, b: string): number => (a < b ? 1 : a > b ? -1 : 0);

function matchSegments(segments: Segment[], parts: string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, segment] of segments.entries()) {
    const part = parts[index] as string;
    if ('literal' in segment) {
      if (segment.literal !== part) return undefined;
      continue;
    }
    try {
      params[segment.param] = decodeURIComponent(part);
    } catch {
      throw new ValidationError('The request path is not valid', [
        { path: `params.${segment.param}`, message: 'is not correctly percent-encoded' },
      ]);
    }
  }
  return params;
}

/**
 * The path below `/api` that a raw path names, or the candidates in the order they are tried:
 * `/api/v1/health` is first tried as `/v1/health`, then (the alias) as `/health`.
 */
export function candidatePaths(rawPath: string): string[] {
  const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
  if (path !== API_PREFIX && !path.startsWith(`${API_PREFIX}/`)) return [];
  const below = path.slice(API_PREFIX.length) || '/';
  if (below === VERSION_ALIAS || below.startsWith(`${VERSION_ALIAS}/`)) {
    return [below, below.slice(VERSION_ALIAS.length) || '/'];
  }
  return [below];
}

export class Router<T extends { def: Pick<RouteDef, 'method' | 'path'> }> {
  private readonly paths: CompiledPath<T>[] = [];

  constructor(routes: T[]) {
    const byTemplate = new Map<string, CompiledPath<T>>();
    for (const route of routes) {
      const { path, method } = route.def;
      let compiled = byTemplate.get(path);
      if (!compiled) {
        compiled = { template: path, segments: compileSegments(path), byMethod: new Map() };
        byTemplate.set(path, compiled);
      }
      if (compiled.byMethod.has(method)) throw new Error(`Route ${method} ${path} is declared twice`);
      compiled.byMethod.set(method, route);
    }
    // A plain comparison of the '0'/'1' strings: localeCompare would load the ICU collator at import.
    this.paths = [...byTemplate.values()].sort((a, b) =>
      compareDescending(specificity(a.segments), specificity(b.segments)),
    );
  }

  match(method: string, rawPath: string): RouteMatch<T> {
    for (const candidate of candidatePaths(rawPath)) {
      const parts = splitPath(candidate);
      for (const compiled of this.paths) {
        const params = matchSegments(compiled.segments, parts);
        if (!params) continue;
        const allowed = [...compiled.byMethod.keys()];
        if (method === 'OPTIONS') return { kind: 'preflight', allowed, template: compiled.template };
        const lookup = (method === 'HEAD' ? 'GET' : method) as HttpMethod;
        const route = compiled.byMethod.get(lookup);
        if (route) return { kind: 'found', route, params, template: compiled.template };
        return { kind: 'method-not-allowed', allowed, template: compiled.template };
      }
    }
    return { kind: 'not-found' };
  }
}
