import { AppError } from '#lib/errors';
import type { HttpMiddleware, HttpRequest } from '#lib/http/types';
import { logger } from '#lib/logger';

/**
 * Turns any error into the specification's error envelope. Errors the service raised on purpose
 * (`AppError` with `expose`) reach the caller as they are; anything else is logged with its cause under
 * the trace id and answered with a bare 500 that carries no stack and no internals. Once the caller is
 * known, the line names its organization (`org_id`), which may then read it back through GET /logs.
 */
export const errorEnvelope = (): HttpMiddleware => {
  const errorEnvelopeOnError = async (request: HttpRequest) => {
    const error = toAppError(request.error);
    // Named on the line itself, not as a logger key: requests share the logger when served side by side.
    const org = request.context.principal ? { org_id: request.context.principal.orgId } : {};
    if (error.status >= 500) {
      logger.error('request failed', { code: error.code, ...org, error: request.error ?? undefined });
    } else {
      logger.info('request rejected', { status: error.status, code: error.code, ...org });
    }
    request.response = {
      statusCode: error.status,
      headers: { 'Content-Type': 'application/json; charset=utf-8', ...error.headers },
      body: JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } }),
    };
  };
  return { onError: errorEnvelopeOnError };
};

function toAppError(error: unknown): AppError {
  if (error instanceof AppError && error.expose) return error;
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new AppError(503, 'SERVICE_UNAVAILABLE', 'The request took too long; try again');
  }
  return new AppError(500, 'INTERNAL_ERROR', 'An unexpected error occurred', { expose: false });
}
