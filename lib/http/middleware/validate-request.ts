import type * as z from 'zod';
import { type ErrorDetail, ValidationError } from '#lib/errors';
import type { HttpMiddleware, HttpRequest } from '#lib/http/types';

/** Validates path parameters, query and body against the route's schemas: 400 with one detail per problem. */
export const validateRequest = (): HttpMiddleware => {
  const validateRequestBefore = async (request: HttpRequest) => {
    const route = request.context.route;
    if (!route) return;
    const problems: ErrorDetail[] = [];
    const params = parsePart('params', route.params, request.context.pathParams, problems);
    const query = parsePart('query', route.query, request.event.queryStringParameters ?? {}, problems);
    const body = parsePart('body', route.body, request.context.body, problems);
    if (problems.length > 0) throw new ValidationError('The request is not valid', problems);
    request.context.input = { params, query, body };
  };
  return { before: validateRequestBefore };
};

function parsePart(
  location: 'params' | 'query' | 'body',
  schema: z.ZodType | undefined,
  value: unknown,
  problems: ErrorDetail[],
): unknown {
  if (!schema) return value;
  if (location === 'body' && value === undefined && !schema.safeParse(undefined).success) {
    problems.push({ path: 'body', message: 'A JSON body is required' });
    return undefined;
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    problems.push({ path: formatPath(location, issue.path), message: issue.message });
  }
  return undefined;
}

function formatPath(location: string, path: PropertyKey[]): string {
  return path.reduce<string>(
    (joined, key) => (typeof key === 'number' ? `${joined}[${key}]` : `${joined}.${String(key)}`),
    location,
  );
}
