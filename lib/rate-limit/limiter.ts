import { table } from '#lib/db/table';

/**
 * Fixed minute and hour windows counted in ONE DynamoDB item per caller and hour, in a partition of its
 * own: a single UpdateItem adds one to the hour's count and to the current minute's attribute and returns
 * both, so rate limiting costs one write per request. The item expires (TTL) an hour after its hour ends.
 */
export interface WindowState {
  limit: number;
  count: number;
  /** Epoch seconds at which the window resets. */
  reset: number;
}

export interface RateState {
  minute: WindowState;
  hour: WindowState;
  /** A route's own per-minute bucket (task creation), counted in the same write. */
  bucket?: WindowState & { name: string };
}

/** A route's own per-minute limit on top of the tier's (e.g. task creation: 30 a minute). */
export interface Bucket {
  name: string;
  perMinute: number;
}

export interface Limits {
  per_minute: number;
  per_hour: number;
}

export const rateKey = (caller: string, hourStart: number) => ({
  pk: `RATE#${caller}#${hourStart}`,
  sk: 'RATE',
});

/** What one count answered: the caller's requests in the windows `now` falls in, this one included. */
export interface Tally {
  /** Epoch seconds of the count. */
  seconds: number;
  minute: number;
  hour: number;
  bucket?: { name: string; count: number };
}

/**
 * Counts one request of `caller`: one UpdateItem that adds one to the hour's count, the minute's and, on
 * a route with a bucket of its own, the bucket's, and answers all of them. It needs no limits, so it can
 * be sent as soon as the caller is known; `stateOf` applies the limits once they are.
 */
export async function countRequest(caller: string, now: Date, bucket?: Bucket): Promise<Tally> {
  const seconds = Math.floor(now.getTime() / 1000);
  const hourStart = seconds - (seconds % 3600);
  const minuteOfHour = Math.floor((seconds - hourStart) / 60);
  const result = await table.update({
    Key: rateKey(caller, hourStart),
    UpdateExpression: `ADD hour_count :one, #minute :one${bucket ? ', #bucket :one' : ''} SET expires_at = :ttl`,
    ExpressionAttributeNames: {
      '#minute': `m${minuteOfHour}`,
      ...(bucket ? { '#bucket': `${bucket.name}_m${minuteOfHour}` } : {}),
    },
    ExpressionAttributeValues: { ':one': 1, ':ttl': hourStart + 7200 },
    ReturnValues: 'UPDATED_NEW',
  });
  const attributes = result.Attributes ?? {};
  return {
    seconds,
    minute: Number(attributes[`m${minuteOfHour}`] ?? 1),
    hour: Number(attributes.hour_count ?? 1),
    ...(bucket
      ? { bucket: { name: bucket.name, count: Number(attributes[`${bucket.name}_m${minuteOfHour}`] ?? 1) } }
      : {}),
  };
}

/** The windows a count falls in, against the caller's limits (and the route's bucket, if it has one). */
export function stateOf(tally: Tally, limits: Limits, bucket?: Bucket): RateState {
  const hourStart = tally.seconds - (tally.seconds % 3600);
  const minuteStart = tally.seconds - (tally.seconds % 60);
  return {
    minute: { limit: limits.per_minute, count: tally.minute, reset: minuteStart + 60 },
    hour: { limit: limits.per_hour, count: tally.hour, reset: hourStart + 3600 },
    ...(bucket && tally.bucket
      ? { bucket: { name: bucket.name, limit: bucket.perMinute, count: tally.bucket.count, reset: minuteStart + 60 } }
      : {}),
  };
}

/**
 * The window with the fewest requests left, which is the one the headers describe: the minute, the
 * hour, or on a route with a bucket of its own (task creation) that bucket, so that a 429 from it
 * reads `X-RateLimit-Limit: 30`, `Remaining: 0`.
 */
export function tightest(state: RateState): WindowState {
  const left = (window: WindowState) => window.limit - window.count;
  const windows = state.bucket ? [state.minute, state.hour, state.bucket] : [state.minute, state.hour];
  return windows.reduce((tighter, window) => (left(window) < left(tighter) ? window : tighter));
}

/** Seconds until the caller may send again, or 0 when within every limit. */
export function retryAfter(state: RateState, now: Date): number {
  const seconds = Math.floor(now.getTime() / 1000);
  const windows = state.bucket ? [state.minute, state.hour, state.bucket] : [state.minute, state.hour];
  const waits = windows.filter((window) => window.count > window.limit).map((window) => window.reset - seconds);
  return waits.length > 0 ? Math.max(1, ...waits) : 0;
}
