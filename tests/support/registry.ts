import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { readServerlessFunctions } from '#infra/local/serverless-routes';
import type { GroupHandler } from '#lib/http/group-handler';
import type { RouteDef } from '#lib/http/route';
import { assertContract } from '#tests/support/contract';
import { context, httpEvent } from '#tests/support/events';
import { assertNoLeaks } from '#tests/support/leak-scan';

/**
 * Any route of the registry, called through the function serverless.yml binds it to: the sweeps that
 * cover every route (malformed input, fuzzing, authentication, tenant isolation) reach routes this way,
 * so a new route is covered without anyone listing it.
 */
const functions = new Map(readServerlessFunctions().map((fn) => [fn.group, fn]));
const handlers = new Map<string, GroupHandler>();

export async function handlerOf(group: string): Promise<GroupHandler> {
  let handler = handlers.get(group);
  if (!handler) {
    const fn = functions.get(group);
    if (!fn) throw new Error(`no function serves ${group}`);
    const module = await import(pathToFileURL(resolve(`${fn.module}.ts`)).href);
    handler = module[fn.exportName] as GroupHandler;
    handlers.set(group, handler);
  }
  return handler;
}

/** A route's path under /api with every `{param}` replaced by `id`, or by the value named in `ids`. */
export const concretePath = (route: Pick<RouteDef, 'path'>, ids: string | Record<string, string>) =>
  `/api${route.path.replace(/\{(\w+)\}/g, (_, name: string) => (typeof ids === 'string' ? ids : (ids[name] ?? '1')))}`;

/** JSON nested `levels` deep. */
export const deep = (levels: number): unknown => {
  let value: unknown = { leaf: 1 };
  for (let level = 1; level < levels; level += 1) value = { next: value };
  return value;
};

/**
 * A body the route's schema probably accepts, built from the zod schema: each field's simplest valid
 * value. Mutating one field of it at a time reaches the code behind validation, where a deep or huge
 * value that validation lets through would do harm.
 */
let unique = 0;

// biome-ignore lint/suspicious/noExplicitAny: walks zod's internal definitions of every schema kind
export function sample(schema: any, depth = 0): unknown {
  const def = schema?.def;
  if (!def || depth > 6) return undefined;
  switch (def.type) {
    case 'object':
      return Object.fromEntries(
        Object.entries(def.shape as Record<string, unknown>)
          .map(([key, field]) => [key, sample(field, depth + 1)])
          .filter(([, value]) => value !== undefined),
      );
    case 'string':
      if (schema.format === 'email') return `sweep${depth}@example.com`;
      if (schema.format === 'url') return 'https://example.com/hook';
      // Unique, so that idempotency keys and names do not turn later requests into repeats.
      unique += 1;
      return `sweep-${unique}`.padEnd(Math.max(8, schema.minLength ?? 0), 'x');
    case 'number':
    case 'int':
      return 1;
    case 'boolean':
      return true;
    case 'enum':
      return Object.values(def.entries)[0];
    case 'literal':
      return def.values[0];
    case 'array':
      return [];
    case 'record':
      return {};
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
      return sample(def.innerType, depth);
    case 'pipe':
      return sample(def.in, depth);
    case 'union':
      return sample(def.options[0], depth);
    default:
      return undefined;
  }
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** The cookies the answer sets (Set-Cookie). */
  cookies: string[];
  body: string;
}

export interface SendOptions {
  body?: string;
  /** The body arrives base64-encoded, as API Gateway hands over a binary one. */
  base64?: boolean;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** The request's cookies, as API Gateway hands them over (`name=value` each). */
  cookies?: string[];
  /** The function to call instead of serverless.yml's (one built with a test's own ports). */
  handler?: GroupHandler;
  /** The caller's address, as API Gateway reports it (anonymous callers are rate limited by it). */
  sourceIp?: string;
}

/**
 * Sends one request to a route's function; the body is passed as is, so it may be anything. A JSON answer
 * goes through the leak scan (tests/support/leak-scan.ts) and must keep the OpenAPI document's promise for
 * its route and status (tests/support/contract.ts).
 */
export async function sendTo(
  route: Pick<RouteDef, 'group' | 'method'>,
  path: string,
  options: SendOptions = {},
): Promise<RawAnswer> {
  const event = httpEvent(route.method, path, {
    headers: options.headers ?? {},
    ...(options.sourceIp ? { sourceIp: options.sourceIp } : {}),
    ...(options.query ? { query: options.query } : {}),
    ...(options.body !== undefined ? { body: options.body, base64: options.base64 ?? false } : {}),
  });
  if (options.cookies) event.cookies = options.cookies;
  const handler = options.handler ?? (await handlerOf(route.group));
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  const status = response.statusCode ?? 200;
  const type = String(response.headers?.['Content-Type'] ?? '');
  if (response.body && type.includes('json') && !response.isBase64Encoded) {
    const body = JSON.parse(response.body);
    assertNoLeaks(route.method, path, status, body);
    assertContract(route.method, path, status, body, type);
  }
  return {
    status,
    headers: (response.headers ?? {}) as Record<string, string>,
    cookies: response.cookies ?? [],
    body: response.body ?? '',
  };
}
