import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parse } from 'yaml';
import { cloudFormationTags } from '#infra/local/yaml-tags';

/**
 * The httpApi routes declared in serverless.yml, and route selection as API Gateway HTTP APIs do it:
 * a path without parameters beats one with `{param}`, which beats a greedy `{proxy+}`; `ANY` matches
 * every method; the `$default` route (`httpApi: '*'`) takes what nothing else matches. The local
 * gateway and the routing consistency test both use this, so they agree with each other by construction.
 */

export interface ServerlessFunction {
  /** The function's key in serverless.yml. */
  name: string;
  /** Module path without extension, e.g. `functions/http/service`. */
  module: string;
  /** The exported handler name, e.g. `handler`. */
  exportName: string;
  /** The endpoint group: the handler file's name. */
  group: string;
}

export interface ApiRoute {
  method: string;
  path: string;
  fn: ServerlessFunction;
  isDefault: boolean;
}

type ScheduleEvent = string | { rate: string | string[]; enabled?: boolean };

interface SqsEvent {
  arn: unknown;
  batchSize?: number;
}

interface FunctionDefinition {
  handler: string;
  events?: Array<{
    httpApi?: string | { method: string; path: string };
    schedule?: ScheduleEvent;
    sqs?: SqsEvent;
  }>;
}

interface ServerlessFile {
  service?: string;
  functions?: Record<string, FunctionDefinition>;
  resources?: unknown[];
}

/** Every function of serverless.yml with its definition. */
function readDefinitions(file: string): Array<{ fn: ServerlessFunction; definition: FunctionDefinition }> {
  const doc = parse(readFileSync(file, 'utf8'), { customTags: cloudFormationTags }) as ServerlessFile;
  return Object.entries(doc.functions ?? {}).map(([name, definition]) => {
    const dot = definition.handler.lastIndexOf('.');
    const module = definition.handler.slice(0, dot);
    const fn = { name, module, exportName: definition.handler.slice(dot + 1), group: basename(module) };
    return { fn, definition };
  });
}

/** Every function of serverless.yml, whatever triggers it (HTTP, queue, schedule). */
export const readServerlessFunctions = (file = 'serverless.yml'): ServerlessFunction[] =>
  readDefinitions(file).map(({ fn }) => fn);

export interface Schedule {
  fn: ServerlessFunction;
  /** The expression as written, e.g. `rate(1 minute)`. */
  expression: string;
  everyMs: number;
}

const RATE_UNITS_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/**
 * The milliseconds between runs of an EventBridge `rate(…)` expression. Local runs know no cron
 * expressions: a function scheduled by one must say so in its own way, so this refuses it by name.
 *
 * @example rateMs('rate(5 minutes)') // 300000
 */
export function rateMs(expression: string): number {
  const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression.trim());
  if (!match) throw new Error(`Only rate(n minutes|hours|days) schedules run locally, not ${expression}`);
  return Number(match[1]) * (RATE_UNITS_MS[match[2] as string] as number);
}

/** The enabled `schedule` events declared in serverless.yml. */
export function readServerlessSchedules(file = 'serverless.yml'): Schedule[] {
  const schedules: Schedule[] = [];
  for (const { fn, definition } of readDefinitions(file)) {
    for (const event of definition.events ?? []) {
      const schedule = event.schedule;
      if (schedule === undefined) continue;
      if (typeof schedule !== 'string' && schedule.enabled === false) continue;
      const rates = typeof schedule === 'string' ? [schedule] : [schedule.rate].flat();
      for (const expression of rates) schedules.push({ fn, expression, everyMs: rateMs(expression) });
    }
  }
  return schedules;
}

export function readServerlessRoutes(file = 'serverless.yml'): ApiRoute[] {
  const routes: ApiRoute[] = [];
  for (const { fn, definition } of readDefinitions(file)) {
    for (const event of definition.events ?? []) {
      const httpApi = event.httpApi;
      if (httpApi === undefined) continue;
      if (httpApi === '*') {
        routes.push({ method: 'ANY', path: '$default', fn, isDefault: true });
      } else if (typeof httpApi === 'string') {
        const [method, path] = httpApi.split(' ');
        routes.push({ method: (method as string).toUpperCase(), path: path as string, fn, isDefault: false });
      } else {
        routes.push({ method: httpApi.method.toUpperCase(), path: httpApi.path, fn, isDefault: false });
      }
    }
  }
  return routes;
}

const segmentsOf = (path: string) => path.split('/').filter(Boolean);

/** A route path's segments, read once per route: `literal`, `{param}` or greedy `{proxy+}`. */
type Segment = { kind: 'literal'; text: string } | { kind: 'param'; name: string } | { kind: 'greedy'; name: string };

const compiled = new WeakMap<ApiRoute, Segment[]>();

function segmentsOfRoute(route: ApiRoute): Segment[] {
  let segments = compiled.get(route);
  if (!segments) {
    segments = segmentsOf(route.path).map((segment): Segment => {
      const greedy = /^\{(\w+)\+\}$/.exec(segment);
      if (greedy) return { kind: 'greedy', name: greedy[1] as string };
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) return { kind: 'param', name: param[1] as string };
      return { kind: 'literal', text: segment };
    });
    compiled.set(route, segments);
  }
  return segments;
}

/** How well a route's path matches the request's segments, or undefined: higher ranks are more specific. */
function rank(pattern: Segment[], parts: string[]): number[] | undefined {
  const rankOfSegments: number[] = [];
  for (const [index, segment] of pattern.entries()) {
    if (segment.kind === 'greedy') {
      // Greedy: takes one or more remaining segments, and ranks below any exact or parameter match.
      if (parts.length <= index) return undefined;
      return [0, ...rankOfSegments, 0];
    }
    const part = parts[index];
    if (part === undefined) return undefined;
    if (segment.kind === 'param') rankOfSegments.push(1);
    else if (segment.text === part) rankOfSegments.push(2);
    else return undefined;
  }
  if (parts.length !== pattern.length) return undefined;
  return [1, ...rankOfSegments];
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (a[i] ?? -1) - (b[i] ?? -1);
    if (difference !== 0) return difference;
  }
  return 0;
}

export interface SelectedRoute {
  route: ApiRoute;
  pathParameters: Record<string, string>;
}

export function selectRoute(routes: ApiRoute[], method: string, path: string): SelectedRoute | undefined {
  const parts = segmentsOf(path);
  let best: { route: ApiRoute; rank: number[] } | undefined;
  for (const route of routes) {
    if (route.isDefault) continue;
    if (route.method !== 'ANY' && route.method !== method) continue;
    const routeRank = rank(segmentsOfRoute(route), parts);
    if (!routeRank) continue;
    // A route for the exact method beats ANY on the same path.
    const ranked = [...routeRank, route.method === 'ANY' ? 0 : 1];
    if (!best || compareRanks(ranked, best.rank) > 0) best = { route, rank: ranked };
  }
  if (best) return { route: best.route, pathParameters: pathParametersOf(segmentsOfRoute(best.route), parts) };
  const fallback = routes.find((route) => route.isDefault);
  return fallback ? { route: fallback, pathParameters: {} } : undefined;
}

function pathParametersOf(pattern: Segment[], parts: string[]): Record<string, string> {
  const parameters: Record<string, string> = {};
  for (const [index, segment] of pattern.entries()) {
    if (segment.kind === 'greedy') {
      parameters[segment.name] = parts.slice(index).join('/');
      break;
    }
    if (segment.kind === 'param') parameters[segment.name] = parts[index] as string;
  }
  return parameters;
}

export interface QueueConsumerDefinition {
  fn: ServerlessFunction;
  /** The queue's name without the `<service>-<stage>-` prefix, e.g. `webhook-delivery`. */
  queue: string;
  batchSize: number;
}

/**
 * The `sqs` events of serverless.yml: which function consumes which queue. An event names its queue
 * as `!GetAtt <LogicalId>.Arn`; the queue's name comes from that resource in the CloudFormation
 * fragments serverless.yml includes (`${file(infra/aws/….yml)}`).
 */
export function readServerlessQueueConsumers(file = 'serverless.yml'): QueueConsumerDefinition[] {
  const doc = parse(readFileSync(file, 'utf8'), { customTags: cloudFormationTags }) as ServerlessFile;
  const queueNames = new Map<string, string>();
  for (const entry of doc.resources ?? []) {
    const included = typeof entry === 'string' ? /^\$\{file\((.+)\)\}$/.exec(entry)?.[1] : undefined;
    if (!included) continue;
    const fragment = parse(readFileSync(included, 'utf8'), { customTags: cloudFormationTags }) as {
      Resources?: Record<string, { Type?: string; Properties?: { QueueName?: string } }>;
    };
    for (const [id, resource] of Object.entries(fragment.Resources ?? {})) {
      const name = resource.Properties?.QueueName;
      if (resource.Type === 'AWS::SQS::Queue' && name) {
        queueNames.set(id, name.replace(/^\$\{self:service\}-\$\{sls:stage\}-/, ''));
      }
    }
  }
  const consumers: QueueConsumerDefinition[] = [];
  for (const { fn, definition } of readDefinitions(file)) {
    for (const event of definition.events ?? []) {
      if (!event.sqs) continue;
      const logicalId = queueLogicalId(event.sqs.arn);
      const queue = logicalId ? queueNames.get(logicalId) : undefined;
      if (!queue) throw new Error(`${fn.name}: its sqs event names no queue declared under resources`);
      consumers.push({ fn, queue, batchSize: event.sqs.batchSize ?? 10 });
    }
  }
  return consumers;
}

/** `!GetAtt WebhookDeliveryQueue.Arn` as the YAML tags parse it. */
function queueLogicalId(arn: unknown): string | undefined {
  const value = (arn as { 'Fn::GetAtt'?: unknown })?.['Fn::GetAtt'] ?? arn;
  const text = Array.isArray(value) ? value.join('.') : String(value);
  return /^(\w+)\.Arn$/.exec(text)?.[1];
}
