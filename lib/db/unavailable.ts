import { ServiceUnavailableError } from '#lib/errors';

/**
 * Telling "the database could not answer" apart from "the request was wrong". The SDK has already
 * retried throttling and network failures by the time an error reaches the service, so what is left
 * is an outage or an overload: the caller should hear 503 and try again later, not 500.
 */

/** DynamoDB's names for throttling and for failures on its side. */
const UNAVAILABLE_ERRORS = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
]);

/** Node's codes for a connection that could not be made or was lost. */
const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Cancellation reasons of a transaction that was refused for load, not for its conditions. */
const THROTTLED_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded']);

/** How long a caller is told to wait before trying again. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, $metadata } = error as { code?: string; $metadata?: { httpStatusCode?: number } };
  return (
    UNAVAILABLE_ERRORS.has(error.name) ||
    (code !== undefined && NETWORK_ERRORS.has(code)) ||
    ($metadata?.httpStatusCode ?? 0) >= 500
  );
}

/** Whether every reason a transaction was cancelled for is load (none is a failed condition). */
export const isThrottledCancellation = (reasons: Array<{ Code?: string }>): boolean =>
  reasons.some((reason) => THROTTLED_REASONS.has(reason.Code ?? '')) &&
  reasons.every((reason) => reason.Code === 'None' || THROTTLED_REASONS.has(reason.Code ?? ''));

export const databaseUnavailable = (cause: unknown): ServiceUnavailableError =>
  new ServiceUnavailableError('The database is unavailable; try again shortly', cause, DATABASE_RETRY_AFTER_SECONDS);
