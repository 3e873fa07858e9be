import { type HttpMiddleware, type HttpRequest, setHeader } from '#lib/http/types';

export interface CorsOptions {
  allowedOrigins: string[];
}

const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'X-Organization-Id',
  'X-Requested-With',
  'X-Trace-Id',
].join(', ');

const EXPOSED_HEADERS = [
  'X-Trace-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
].join(', ');

/**
 * CORS for the origins in ALLOWED_ORIGINS only, with credentials (the `service_jwt` cookie). Other origins
 * get no CORS headers, so browsers refuse to hand them the response. Preflights are answered by the group
 * handler; this middleware only adds their headers.
 */
export const cors = (options: CorsOptions): HttpMiddleware => {
  const allowed = new Set(options.allowedOrigins);
  const corsAfter = async (request: HttpRequest) => {
    const response = request.response;
    if (!response) return;
    setHeader(response, 'Vary', 'Origin');
    const origin = request.event.headers?.origin;
    if (!origin || !allowed.has(origin)) return;
    setHeader(response, 'Access-Control-Allow-Origin', origin);
    setHeader(response, 'Access-Control-Allow-Credentials', 'true');
    setHeader(response, 'Access-Control-Expose-Headers', EXPOSED_HEADERS);
    const preflight = request.context.preflight;
    if (preflight) {
      setHeader(response, 'Access-Control-Allow-Methods', [...preflight.allowed, 'OPTIONS'].join(', '));
      setHeader(response, 'Access-Control-Allow-Headers', ALLOWED_HEADERS);
      setHeader(response, 'Access-Control-Max-Age', '600');
    }
  };
  return { after: corsAfter, onError: corsAfter };
};
