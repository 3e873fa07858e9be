import { type HttpMiddleware, type HttpRequest, hasHeader, setHeader } from '#lib/http/types';

/** Headers every API response carries; a route may set its own Content-Security-Policy or caching. */
const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
};

export const securityHeaders = (): HttpMiddleware => {
  const securityHeadersAfter = async (request: HttpRequest) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
      if (!hasHeader(request.response, name)) setHeader(request.response, name, value);
    }
  };
  return { after: securityHeadersAfter, onError: securityHeadersAfter };
};
