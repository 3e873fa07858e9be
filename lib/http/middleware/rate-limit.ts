import { tierOf } from '#lib/billing/catalogue';
import type { Tier } from '#lib/config';
import { holdWritesUntil, ungated } from '#lib/db/request-scope';
import { RateLimitedError } from '#lib/errors';
import { type HttpMiddleware, type HttpRequest, setHeader } from '#lib/http/types';
import type { Clock } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { type Bucket, countRequest, retryAfter, stateOf, tightest } from '#lib/rate-limit/limiter';

export interface RateLimitOptions {
  clock: Clock;
  /** Tier whose limits apply to callers without a credential, per source IP. */
  anonymousTier: Tier;
  /** When given, this tier's limits apply to every caller (configuration for tests and benchmarks). */
  overrideTier?: Tier;
}

/** The rate-limit middleware, and how authentication starts its count as soon as it knows the caller. */
export type RateLimiter = HttpMiddleware & {
  /** Sends the count of an authenticated caller's organization now, before the request reaches this layer. */
  countFor(request: HttpRequest, orgId: string): void;
};

/**
 * Counts every request against its caller's limits: per organization (its tier's limits) once
 * authenticated, per source IP (the anonymous tier) otherwise, and answers 429 with Retry-After past
 * either window. Requests refused before this point (bad JSON, unknown route, bad credential) count
 * against the source IP on their way out, so failures are not free.
 *
 * The count is one write whose answer decides, and the handler does not wait for it: it starts at once,
 * its reads go out beside the count, and the request's gate (lib/db/request-scope.ts) holds every write
 * it makes, and its answer, until the count has answered. A refused request makes no write and its reads
 * are thrown away: its answer is the 429. So the limit stays exact, and costs no round trip of its own.
 * An API key's organization is known before its record is read: authentication sends the count then
 * (`countFor`), beside that read.
 */
export const rateLimit = (options: RateLimitOptions): RateLimiter => {
  const exempt = (request: HttpRequest) => request.context.route?.rateLimited === false;
  const bucketOf = (request: HttpRequest) => {
    const route = request.context.route;
    return request.context.principal && route?.rateLimit ? route.rateLimit : undefined;
  };
  const send = (request: HttpRequest, caller: string, bucket: Bucket | undefined) => {
    const now = options.clock.now();
    // The count is the admission's own write: it never waits for the gate it decides.
    const tally = ungated(() => countRequest(caller, now, bucket)).catch((error: unknown) => {
      // Fail open: when the counter cannot be written (the table is unreachable), the request is
      // served unlimited rather than refused, so that health probes can still report the outage.
      logger.warn('rate limit counter unavailable; request not limited', { error: error as Error });
      return undefined;
    });
    request.context.tally = tally;
    return tally;
  };
  const countFor = (request: HttpRequest, orgId: string) => {
    if (request.context.preflight || exempt(request) || request.context.tally) return;
    const route = request.context.route;
    send(request, `org#${orgId}`, route?.rateLimit);
  };
  const rateLimitBefore = async (request: HttpRequest) => {
    if (request.context.preflight || exempt(request)) return;
    const principal = request.context.principal;
    const bucket = bucketOf(request);
    const tally =
      request.context.tally ??
      send(
        request,
        principal ? `org#${principal.orgId}` : `ip#${request.event.requestContext?.http?.sourceIp ?? 'unknown'}`,
        bucket,
      );
    const tier =
      options.overrideTier ??
      (principal ? (principal.organization.tier ?? options.anonymousTier) : options.anonymousTier);
    const decided = tally.then((counted) => {
      if (!counted) {
        request.context.rateLimitSkipped = true;
        return;
      }
      const state = stateOf(counted, tierOf(tier).rate_limits, bucket);
      request.context.rateLimit = state;
      const wait = retryAfter(state, new Date(counted.seconds * 1000));
      if (wait > 0) throw new RateLimitedError(wait);
    });
    request.context.admitted = decided;
    holdWritesUntil(decided);
  };
  const rateLimitOnError = async (request: HttpRequest) => {
    const { admitted, tally, preflight } = request.context;
    if (admitted) {
      // Refused by the limit, the request answers 429 whatever else went wrong meanwhile.
      await admitted.catch((refusal: Error) => {
        request.error = refusal;
      });
      return;
    }
    if (preflight || exempt(request)) return;
    const limits = tierOf(options.overrideTier ?? options.anonymousTier).rate_limits;
    if (tally) {
      // Counted against the organization already, before authentication refused it.
      const counted = await tally;
      if (counted) request.context.rateLimit = stateOf(counted, limits);
      return;
    }
    try {
      const ip = `ip#${request.event.requestContext?.http?.sourceIp ?? 'unknown'}`;
      request.context.rateLimit = stateOf(await countRequest(ip, options.clock.now()), limits);
    } catch (error) {
      logger.warn('counting a refused request failed', { error: error as Error });
    }
  };
  return { before: rateLimitBefore, onError: rateLimitOnError, countFor };
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
