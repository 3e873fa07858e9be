import type * as z from 'zod';
import { AppError } from '#lib/errors';
import type { RouteDef } from '#lib/http/route';

/**
 * Domain errors name fields (`title`, `fields.api_key`); the caller needs to know where in the request
 * that field was (`body.title`). This is the one place that adds the location, from the route's own
 * schemas: a field of the body schema is `body.…`, of the query `query.…`, of the path `params.…`.
 * A field no schema declares is placed in the body of a route that takes one, else in the query.
 */
const LOCATIONS = ['body', 'query', 'params', 'path', 'method', 'headers'];

export function locateFields(error: unknown, def: RouteDef, renames: Record<string, string> = {}): void {
  if (!(error instanceof AppError)) return;
  for (const detail of error.details) {
    if (!detail || typeof detail !== 'object') continue;
    const entry = detail as { path?: unknown };
    if (typeof entry.path !== 'string' || entry.path === '') continue;
    const [head = '', ...rest] = entry.path.split('.');
    // A field may share a location's name (a file's `path`): the route's own fields come first.
    if (LOCATIONS.includes(head) && !isDeclared(head, def)) continue;
    const field = Object.hasOwn(renames, head) ? (renames[head] as string) : head;
    entry.path = [locationOf(field, def), field, ...rest].join('.');
  }
}

const isDeclared = (field: string, def: RouteDef): boolean =>
  [def.body, def.query, def.params].some((schema) => fieldsOf(schema).has(field));

function locationOf(field: string, def: RouteDef): string {
  if (fieldsOf(def.body).has(field)) return 'body';
  if (fieldsOf(def.query).has(field)) return 'query';
  if (fieldsOf(def.params).has(field)) return 'params';
  return def.body ? 'body' : 'query';
}

/** The top-level field names of an object schema, through optional, nullable, pipe and default wrappers. */
function fieldsOf(schema: z.ZodType | undefined): Set<string> {
  let current: unknown = schema;
  for (let depth = 0; depth < 8 && current; depth += 1) {
    const shape = (current as { shape?: Record<string, unknown> }).shape;
    if (shape && typeof shape === 'object') return new Set(Object.keys(shape));
    const def = (current as { def?: { in?: unknown; innerType?: unknown; schema?: unknown } }).def;
    current = def?.in ?? def?.innerType ?? def?.schema;
  }
  return new Set();
}
