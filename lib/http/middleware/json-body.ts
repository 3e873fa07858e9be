import httpJsonBodyParser from '@middy/http-json-body-parser';
import { InvalidJsonError, PayloadTooLargeError, ValidationError } from '#lib/errors';
import { jsonTextDepth, MAX_BODY_DEPTH, unstorableValueIn } from '#lib/http/schemas';
import type { HttpMiddleware, HttpRequest } from '#lib/http/types';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Keeps the raw body (signature checks need the exact bytes) and parses it as JSON whatever the
 * Content-Type says, since every body this API takes is JSON: 413 above the limit, 400 INVALID_JSON when
 * it does not parse, 400 VALIDATION_ERROR when it nests too deep or holds a number or a string the
 * table cannot store as sent (see `unstorableValueIn`). Bodies of GET, HEAD and OPTIONS requests are ignored.
 */
export const jsonBody = (options: { limitBytes?: number } = {}): HttpMiddleware => {
  const limit = options.limitBytes ?? MAX_BODY_BYTES;
  // `disableContentTypeCheck` exists in the middleware but not in its published type declarations.
  const parser = httpJsonBodyParser({ disableContentTypeCheck: true } as Parameters<typeof httpJsonBodyParser>[0]);
  const jsonBodyBefore = async (request: HttpRequest) => {
    const { body, isBase64Encoded } = request.event;
    const method = request.event.requestContext?.http?.method?.toUpperCase();
    if (body === undefined || body === null || body === '') return;
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return;
    const bytes = isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
    if (bytes.byteLength > limit) throw new PayloadTooLargeError(limit);
    const text = bytes.toString('utf8');
    request.context.rawBody = text;
    if (jsonTextDepth(text) > MAX_BODY_DEPTH) {
      const message = `is nested deeper than ${MAX_BODY_DEPTH} levels`;
      throw new ValidationError(`The request body ${message}`, [{ path: 'body', message }]);
    }
    // The parser replaces `event.body`; run it on a copy so the event keeps the raw string.
    const probe = { event: { headers: request.event.headers, body: text, isBase64Encoded: false } };
    try {
      await parser.before?.(probe as unknown as Parameters<NonNullable<typeof parser.before>>[0]);
    } catch {
      // The parser's error carries the body as its cause; it must not reach a log line.
      throw new InvalidJsonError();
    }
    const unstorable = unstorableValueIn(probe.event.body);
    if (unstorable !== undefined) {
      throw new ValidationError('The request body holds a value the service cannot store', [unstorable]);
    }
    request.context.body = probe.event.body;
  };
  return { before: jsonBodyBefore };
};
