import { tierOf } from '#lib/billing/catalogue';
import type { Tier } from '#lib/config';
import { RateLimitedError } from '#lib/errors';
import { type HttpMiddleware, type HttpRequest, setHeader } from '#lib/http/types';
import type { Clock } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { countRequest, retryAfter, tightest } from '#lib/rate-limit/limiter';

export interface RateLimitOptions {
  clock: Clock;
  /** Tier whose limits apply to callers without a credential, per source IP. */
  anonymousTier: Tier;
  /** When given, this tier's limits apply to every caller (configuration for tests and benchmarks). */
  overrideTier?: Tier;
}

/**
 * Counts every request against its caller's limits: per organization (its tier's limits) once
 * authenticated, per source IP (the anonymous tier) otherwise, and answers 429 with Retry-After past
 * either window. Requests refused before this point (bad JSON, unknown route, bad credential) count
 * against the source IP on their way out, so failures are not free.
 */
export const rateLimit = (options: RateLimitOptions): HttpMiddleware => {
  const count = async (request: HttpRequest) => {
    const principal = request.context.principal;
    const caller = principal
      ? `org#${principal.orgId}`
      : `ip#${request.event.requestContext?.http?.sourceIp ?? 'unknown'}`;
    const tier =
      options.overrideTier ??
      (principal ? (principal.organization.tier ?? options.anonymousTier) : options.anonymousTier);
    const now = options.clock.now();
    const route = request.context.route;
    const bucket = principal && route?.rateLimit ? route.rateLimit : undefined;
    const state = await countRequest(caller, tierOf(tier).rate_limits, now, bucket);
    request.context.rateLimit = state;
    return { state, now };
  };
  const exempt = (request: HttpRequest) => request.context.route?.rateLimited === false;
  const rateLimitBefore = async (request: HttpRequest) => {
    if (request.context.preflight || exempt(request)) return;
    let counted: Awaited<ReturnType<typeof count>>;
    try {
      counted = await count(request);
    } catch (error) {
      // Fail open: when the counter cannot be written (the table is unreachable), the request is
      // served unlimited rather than refused, so that health probes can still report the outage.
      logger.warn('rate limit counter unavailable; request not limited', { error: error as Error });
      request.context.rateLimitSkipped = true;
      return;
    }
    const wait = retryAfter(counted.state, counted.now);
    if (wait > 0) throw new RateLimitedError(wait);
  };
  const rateLimitOnError = async (request: HttpRequest) => {
    const { rateLimit, rateLimitSkipped, preflight } = request.context;
    if (rateLimit || rateLimitSkipped || preflight || exempt(request)) return;
    try {
      await count(request);
    } catch (error) {
      logger.warn('counting a refused request failed', { error: error as Error });
    }
  };
  return { before: rateLimitBefore, onError: rateLimitOnError };
};

/**
 * Writes X-RateLimit-Limit, -Remaining and -Reset (epoch seconds) for the tightest window on every
 * response, errors included. Registered before the error envelope so that it runs after it.
 */
export const rateLimitHeaders = (): HttpMiddleware => {
  const rateLimitHeadersAfter = async (request: HttpRequest) => {
    const state = request.context.rateLimit;
    if (!state || !request.response) return;
    const window = tightest(state);
    setHeader(request.response, 'X-RateLimit-Limit', String(window.limit));
    setHeader(request.response, 'X-RateLimit-Remaining', String(Math.max(0, window.limit - window.count)));
    setHeader(request.response, 'X-RateLimit-Reset', String(window.reset));
  };
  return { after: rateLimitHeadersAfter, onError: rateLimitHeadersAfter };
};
