/**
 * The service's error taxonomy. Domain code throws these; the HTTP error middleware turns them into
 * the specification's envelope `{ error: { code, message, details } }`.
 *
 * Only errors marked `expose` (every status below 500, plus the few 5xx the specification names)
 * reach the client as themselves; anything else becomes a generic 500 INTERNAL_ERROR.
 */
export interface ErrorDetail {
  path: string;
  message: string;
  [extra: string]: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown[];
  readonly expose: boolean;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: {
      details?: unknown[];
      cause?: unknown;
      expose?: boolean;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.details = options.details ?? [];
    this.expose = options.expose ?? status < 500;
    this.headers = options.headers ?? {};
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details: ErrorDetail[] = [], cause?: unknown) {
    super(400, 'VALIDATION_ERROR', message, { details, cause });
    this.name = 'ValidationError';
  }
}

export class InvalidJsonError extends AppError {
  constructor(cause?: unknown) {
    super(400, 'INVALID_JSON', 'The request body is not valid JSON', { cause });
    this.name = 'InvalidJsonError';
  }
}

export class UnauthorizedError extends AppError {
  /** `headers`: the challenge (`WWW-Authenticate`) of the scheme the caller should use. */
  constructor(message = 'Authentication required', headers: Record<string, string> = {}) {
    super(401, 'UNAUTHORIZED', message, { headers });
    this.name = 'UnauthorizedError';
  }
}

export class PaymentRequiredError extends AppError {
  constructor(message: string, details: unknown[] = []) {
    super(402, 'PAYMENT_REQUIRED', message, { details });
    this.name = 'PaymentRequiredError';
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You do not have permission to do this') {
    super(403, 'FORBIDDEN', message);
    this.name = 'ForbiddenError';
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found') {
    super(404, 'NOT_FOUND', message);
    this.name = 'NotFoundError';
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(allowed: string[]) {
    super(405, 'METHOD_NOT_ALLOWED', `Method not allowed; allowed: ${allowed.join(', ')}`, {
      details: allowed.map((method) => ({ path: 'method', message: `${method} is allowed` })),
      headers: { Allow: allowed.join(', ') },
    });
    this.name = 'MethodNotAllowedError';
  }
}

export class ConflictError extends AppError {
  constructor(message: string, details: unknown[] = []) {
    super(409, 'CONFLICT', message, { details });
    this.name = 'ConflictError';
  }
}

/**
 * A conditional write was refused. `reason` is the code the writer gave the condition (`duplicate`,
 * `stale`, `slug-taken`…), so callers tell conditions apart by code, never by message or SDK error name.
 * Unhandled, it answers 409 like any other conflict.
 */
export class ConditionFailedError extends ConflictError {
  constructor(
    readonly reason: string,
    message = 'The record was changed by another request; try again',
  ) {
    super(message);
    this.name = 'ConditionFailedError';
  }
}

/** Whether `error` is a refused condition, with the given reason code when one is named. */
export const isConditionFailed = (error: unknown, reason?: string): error is ConditionFailedError =>
  error instanceof ConditionFailedError && (reason === undefined || error.reason === reason);

/** 413: the request body is over its limit, or, naming a `field`, one field of it is over that field's own. */
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number, field?: string) {
    super(
      413,
      'PAYLOAD_TOO_LARGE',
      field === undefined
        ? `The request body is larger than ${limitBytes} bytes`
        : `${field} is larger than ${limitBytes} bytes`,
      { details: field === undefined ? [] : [{ path: field, message: `is larger than ${limitBytes} bytes as UTF-8` }] },
    );
    this.name = 'PayloadTooLargeError';
  }
}

export class UnprocessableError extends AppError {
  constructor(message: string, details: unknown[] = []) {
    super(422, 'UNPROCESSABLE', message, { details });
    this.name = 'UnprocessableError';
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'RATE_LIMITED', 'Rate limit exceeded', {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
    this.name = 'RateLimitedError';
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message = 'Service unavailable', cause?: unknown, retryAfterSeconds?: number) {
    super(503, 'SERVICE_UNAVAILABLE', message, {
      cause,
      expose: true,
      ...(retryAfterSeconds === undefined ? {} : { headers: { 'Retry-After': String(retryAfterSeconds) } }),
    });
    this.name = 'ServiceUnavailableError';
  }
}

/**
 * An agent run that failed (AgentRunner port): the provider refused, timed out or answered something
 * unusable. The message says why without secrets; `retryable` is true when the same run may succeed
 * later (a 429, a 5xx, a timeout). Never an HTTP answer: the agent tick records it on the task.
 */
export class AgentRunError extends Error {
  readonly retryable: boolean;

  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentRunError';
    this.retryable = options.retryable;
  }
}

/**
 * A queue message of the right shape that names a record which does not exist (never written, or not
 * this organization's). Records are written before their messages are sent, so such a message is a
 * fault, not a race: it is reported failed, delivered again, and, failing every time, moved to the
 * dead-letter queue where an operator can see it, instead of being dropped in silence.
 */
export class OrphanMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OrphanMessageError';
  }
}
