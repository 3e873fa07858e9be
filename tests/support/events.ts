import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { lambdaContext } from '#infra/local/lambda-context';
import { assertNoLeaks } from '#tests/support/leak-scan';

const cache = new Map<string, unknown>();

/** A sample event from `events/<name>.json`, cloned so a test can change it freely. */
export function loadEvent<T = APIGatewayProxyEventV2>(name: string): T {
  let event = cache.get(name);
  if (!event) {
    event = JSON.parse(readFileSync(`events/${name}.json`, 'utf8'));
    cache.set(name, event);
  }
  return structuredClone(event) as T;
}

/** An HTTP API event for a method and path, built from the GET sample. */
export function httpEvent(
  method: string,
  path: string,
  options: {
    body?: string;
    headers?: Record<string, string>;
    query?: Record<string, string>;
    base64?: boolean;
    /** The caller's address as API Gateway reports it (anonymous callers are rate limited by it). */
    sourceIp?: string;
  } = {},
): APIGatewayProxyEventV2 {
  const event = loadEvent('http/get-health');
  event.rawPath = path;
  event.requestContext.http.method = method;
  event.requestContext.http.path = path;
  event.routeKey = '$default';
  if (options.sourceIp) event.requestContext.http.sourceIp = options.sourceIp;
  event.headers = { ...event.headers, ...options.headers };
  if (options.query) {
    event.queryStringParameters = options.query;
    event.rawQueryString = new URLSearchParams(options.query).toString();
  }
  if (options.body !== undefined) {
    event.body = options.base64 ? Buffer.from(options.body).toString('base64') : options.body;
    event.isBase64Encoded = options.base64 ?? false;
  }
  return event;
}

export const context = (name = 'test'): Context => lambdaContext(name);

/** The parsed JSON body of a handler result, which went through the leak scan (tests/support/leak-scan.ts). */
export function bodyOf(result: { body?: string; statusCode?: number }): unknown {
  const body: unknown = JSON.parse(result.body ?? 'null');
  assertNoLeaks('a handler', 'result', result.statusCode ?? 200, body);
  return body;
}
