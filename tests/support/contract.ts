import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { RouteDef } from '#lib/http/route';
import { buildOpenApiDocument } from '#lib/openapi/document';
import { allRoutes } from '#lib/routes/index';
import { tally } from '#tests/support/tally';

/**
 * The response contract: every answer a test receives must be one the OpenAPI document promises for its
 * route and status, checked by an independent JSON Schema validator (Ajv) against the published document
 * rather than against the zod schemas it was generated from, so neither the document nor the behaviour
 * can drift from the other unnoticed. Paths outside the document (unknown routes) must answer the error
 * envelope.
 */

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = any;

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  /** Literal segments first: `/tasks/stats` wins over `/tasks/{id}`, as the router decides. */
  weight: number;
  responses: Record<string, Json>;
}

let compiled: { ajv: Ajv; operations: Operation[]; envelope: ValidateFunction } | undefined;
const validators = new Map<string, ValidateFunction>();
const testRoutes: RouteDef[] = [];

/** Routes a test declares for itself (to exercise the HTTP stack) keep the contract their own entries make. */
export function contractCovers(...routes: RouteDef[]): void {
  testRoutes.push(...routes);
  compiled = undefined;
  validators.clear();
}

function contract() {
  if (compiled) return compiled;
  const document: Json = buildOpenApiDocument([...allRoutes, ...testRoutes]);
  // OpenAPI 3.0 schemas: `nullable` is understood by Ajv itself; `example` is an annotation.
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components, paths: document.paths });
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(document.paths)) {
    const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
    for (const [method, operation] of Object.entries<Json>(item)) {
      operations.push({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${source}$`),
        weight: template.split('/').filter((part) => !part.startsWith('{')).length,
        responses: operation.responses,
      });
    }
  }
  operations.sort((a, b) => b.weight - a.weight);
  const envelope = ajv.compile({ $ref: 'openapi#/components/schemas/ErrorEnvelope' });
  compiled = { ajv, operations, envelope };
  return compiled;
}

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function validatorFor(template: string, method: string, status: string, type: string): ValidateFunction {
  const key = `${method} ${template} ${status} ${type}`;
  let validate = validators.get(key);
  if (!validate) {
    const at = pointer('paths', template, method.toLowerCase(), 'responses', status, 'content', type, 'schema');
    validate = contract().ajv.compile({ $ref: `openapi#/${at}` });
    validators.set(key, validate);
  }
  return validate;
}

/**
 * What is wrong with an answer, measured against the document; undefined when it keeps the contract.
 * `path` is the request path with or without `/api` or `/api/v1` and with or without a query string.
 */
export function contractBreach(
  method: string,
  path: string,
  status: number,
  body: unknown,
  contentType = 'application/json',
): string | undefined {
  const { operations, envelope } = contract();
  tally.contractChecks += 1;
  // `/api/v1/x` is the alias of `/api/x`, unless the document has a `/v1/...` path of its own.
  const below = path.split('?')[0]?.replace(/^\/api(?=\/|$)/, '') || '/';
  const known = operations.some((operation) => operation.pattern.test(below));
  const bare = known ? below : below.replace(/^\/v1(?=\/|$)/, '') || '/';
  const candidates = operations.filter((operation) => operation.pattern.test(bare));
  const operation = candidates.find((candidate) => candidate.method === method);
  const answer = `${method} ${bare} answered ${status}`;
  if (!operation) {
    // Not a route of the document (an unknown path or method): the error envelope, and nothing else.
    if (status < 400) return `${answer}, but the document has no such operation`;
    if (!envelope(body)) return `${answer} outside the error envelope: ${JSON.stringify(envelope.errors)}`;
    return undefined;
  }
  const response = operation.responses[String(status)];
  if (!response) return `${answer}, a status the document does not list for ${method} ${operation.template}`;
  const type = contentType.split(';')[0]?.trim() ?? '';
  if (!response.content) return body === undefined ? undefined : `${answer} with a body the document does not declare`;
  if (!response.content[type]) return `${answer} as ${type}; the document declares ${Object.keys(response.content)}`;
  if (!type.includes('json')) return undefined;
  const validate = validatorFor(operation.template, method, String(status), type);
  if (validate(body)) return undefined;
  return `${answer} with a body that does not match the document: ${JSON.stringify(validate.errors?.slice(0, 5))}`;
}

/** Throws when an answer breaks the contract (see `contractBreach`). */
export function assertContract(method: string, path: string, status: number, body: unknown, contentType?: string) {
  const breach = contractBreach(method, path, status, body, contentType);
  if (breach) throw new Error(`Response contract: ${breach}`);
}
