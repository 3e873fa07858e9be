import { randomUUID } from 'node:crypto';
import { type HttpMiddleware, type HttpRequest, setHeader } from '#lib/http/types';
import { logger } from '#lib/logger';

/** A caller's trace id is kept when it is short and made of safe characters; otherwise one is made. */
const SANE_TRACE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const TRACE_HEADER = 'X-Trace-Id';

export const traceId = (): HttpMiddleware => {
  const traceIdBefore = async (request: HttpRequest) => {
    const given = request.event.headers?.['x-trace-id'];
    request.context.traceId = given && SANE_TRACE_ID.test(given) ? given : randomUUID();
    logger.appendKeys({ trace_id: request.context.traceId });
  };
  const traceIdAfter = async (request: HttpRequest) => {
    // An error thrown before this middleware's `before` still gets an id on its response.
    request.context.traceId ??= randomUUID();
    setHeader(request.response, TRACE_HEADER, request.context.traceId);
    logger.removeKeys(['trace_id']);
  };
  return { before: traceIdBefore, after: traceIdAfter, onError: traceIdAfter };
};
