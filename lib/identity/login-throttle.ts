import { getMany } from '#lib/db/batch';
import { anyOf } from '#lib/db/conditions';
import type { TableKey } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { isConditionFailed, RateLimitedError } from '#lib/errors';
import { epochSeconds } from '#lib/identity/ttl';

/**
 * Failed logins are counted per email address and per source IP in fixed 15-minute windows. Past the
 * limit, logins for that email (or from that IP) are refused with 429 and Retry-After until the window
 * ends, before any password is checked: ten guesses per quarter hour per account makes guessing useless.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | login throttle | `THROTTLE#<kind>#<value>` | `THROTTLE` | `window_start`, `failures`; TTL two windows on |
 *
 * Kinds: `login-email` (the address lowercased) and `login-ip`. A count is refused with `other-window`
 * when the stored window is not the current one, and a new window with `window-started` when another
 * request started it first.
 */
export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_FAILURES_PER_EMAIL = 10;
export const MAX_FAILURES_PER_IP = 50;

export const throttleKey = (kind: string, value: string): TableKey => ({
  pk: `THROTTLE#${kind}#${value}`,
  sk: 'THROTTLE',
});

interface ThrottleItem {
  window_start: number;
  failures: number;
}

const inWindow = 'window_start = :w';
const notInWindow = anyOf('attribute_not_exists(window_start)', 'window_start <> :w');

const windowOf = (now: Date) => Math.floor(epochSeconds(now) / LOGIN_WINDOW_SECONDS) * LOGIN_WINDOW_SECONDS;

const keysFor = (email: string, ip: string) => [
  { key: throttleKey('login-email', email.toLowerCase()), limit: MAX_FAILURES_PER_EMAIL },
  { key: throttleKey('login-ip', ip), limit: MAX_FAILURES_PER_IP },
];

export async function assertLoginAllowed(email: string, ip: string, now: Date): Promise<void> {
  const window = windowOf(now);
  const targets = keysFor(email, ip);
  const items = await getMany<ThrottleItem>(targets.map((target) => target.key));
  for (const [index, item] of items.entries()) {
    const limit = (targets[index] as { limit: number }).limit;
    if (item && item.window_start === window && item.failures >= limit) {
      throw new RateLimitedError(window + LOGIN_WINDOW_SECONDS - epochSeconds(now));
    }
  }
}

export async function recordLoginFailure(email: string, ip: string, now: Date): Promise<void> {
  const window = windowOf(now);
  const ttl = window + 2 * LOGIN_WINDOW_SECONDS;
  await Promise.all(keysFor(email, ip).map(({ key }) => countFailure(key, window, ttl)));
}

/** Adds one failure to the current window, or starts a new window at one. */
async function countFailure(key: TableKey, window: number, ttl: number): Promise<void> {
  try {
    await table.update({
      Key: key,
      UpdateExpression: 'ADD failures :one',
      ConditionExpression: inWindow,
      ExpressionAttributeValues: { ':one': 1, ':w': window },
      reason: 'other-window',
    });
  } catch (error) {
    if (!isConditionFailed(error, 'other-window')) throw error;
    try {
      await table.update({
        Key: key,
        UpdateExpression: 'SET failures = :one, window_start = :w, expires_at = :ttl',
        ConditionExpression: notInWindow,
        ExpressionAttributeValues: { ':one': 1, ':w': window, ':ttl': ttl },
        reason: 'window-started',
      });
    } catch (again) {
      // Another request started this window first: count in it.
      if (!isConditionFailed(again, 'window-started')) throw again;
      await countFailure(key, window, ttl);
    }
  }
}
