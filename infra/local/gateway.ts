import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { lambdaContext } from '#infra/local/lambda-context';
import {
  type ApiRoute,
  readServerlessRoutes,
  type ServerlessFunction,
  selectRoute,
} from '#infra/local/serverless-routes';

/**
 * The local stand-in for API Gateway (HTTP API, payload 2.0): reads the httpApi routes of
 * serverless.yml, turns each HTTP request into the event API Gateway would send, invokes the same
 * handler in-process and writes its result back as API Gateway would.
 */

/** API Gateway's own payload limit; the service's 1 MiB limit is enforced by the handlers. */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;

const TEXT_TYPES = /^(text\/|application\/(json|[\w.+-]+\+json|xml|x-www-form-urlencoded|javascript))/i;

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;

export interface GatewayOptions {
  port: number;
  host?: string;
  serverlessFile?: string;
  /** Called once per request with a one-line summary. */
  onRequest?: (line: string) => void;
}

export interface Gateway {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const routes = readServerlessRoutes(options.serverlessFile);
  const handlers = new Map<string, Promise<Handler>>();
  const load = (fn: ServerlessFunction): Promise<Handler> => {
    let handler = handlers.get(fn.name);
    if (!handler) {
      const url = pathToFileURL(resolve(`${fn.module}.ts`)).href;
      handler = import(url).then((module) => module[fn.exportName] as Handler);
      handlers.set(fn.name, handler);
    }
    return handler;
  };

  const server = createServer((request, response) => {
    const started = performance.now();
    serve(request, response, routes, load)
      .catch((error: unknown) => {
        console.error('local gateway: handler failed', error);
        if (!response.headersSent) {
          response.writeHead(500, { 'content-type': 'application/json' });
        }
        response.end(JSON.stringify({ message: 'Internal Server Error' }));
      })
      .finally(() => {
        const ms = (performance.now() - started).toFixed(1);
        options.onRequest?.(`${request.method} ${request.url} ${response.statusCode} ${ms}ms`);
      });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', fail);
      done();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://localhost:${port}`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  routes: ApiRoute[],
  load: (fn: ServerlessFunction) => Promise<Handler>,
): Promise<void> {
  const body = await readBody(request);
  if (body === undefined) {
    response.writeHead(413, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ message: 'Request Entity Too Large' }));
    return;
  }
  const url = new URL(request.url ?? '/', 'http://localhost');
  const method = (request.method ?? 'GET').toUpperCase();
  const selected = selectRoute(routes, method, url.pathname);
  if (!selected) {
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ message: 'Not Found' }));
    return;
  }
  const event = toEvent(request, url, body, selected.route, selected.pathParameters);
  const handler = await load(selected.route.fn);
  const result = await handler(event, lambdaContext(selected.route.fn.name));
  writeResult(response, result);
}

function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > GATEWAY_MAX_BODY) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on('end', () => done(tooLarge ? undefined : Buffer.concat(chunks)));
    request.on('error', fail);
  });
}

function toEvent(
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  route: ApiRoute,
  pathParameters: Record<string, string>,
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (name === 'cookie') {
      cookies = (Array.isArray(value) ? value.join('; ') : value).split(/;\s*/).filter(Boolean);
      continue;
    }
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = name in query ? `${query[name]},${value}` : value;
  }
  const contentType = headers['content-type'] ?? '';
  const isText = body.length === 0 || contentType === '' || TEXT_TYPES.test(contentType);
  const method = (request.method ?? 'GET').toUpperCase();
  const now = new Date();
  const routeKey = route.isDefault ? '$default' : `${route.method} ${route.path}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(Object.keys(pathParameters).length > 0 ? { pathParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: normalizeIp(request.socket.remoteAddress),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: isText ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: !isText,
  };
}

const normalizeIp = (address: string | undefined): string => (address ?? '127.0.0.1').replace(/^::ffff:/, '');

function writeResult(response: ServerResponse, result: APIGatewayProxyResultV2): void {
  // As API Gateway does: a result without statusCode is a 200 whose body is the JSON of the result.
  if (typeof result !== 'object' || result === null || !('statusCode' in result)) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(typeof result === 'string' ? result : JSON.stringify(result));
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  const payload = result.body === undefined ? '' : result.body;
  const bytes = result.isBase64Encoded ? Buffer.from(payload, 'base64') : Buffer.from(payload, 'utf8');
  headers['content-length'] = String(bytes.length);
  response.writeHead(result.statusCode ?? 200, headers);
  response.end(bytes);
}
