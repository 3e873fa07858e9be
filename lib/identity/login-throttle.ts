import { getMany } from '#lib/db/batch';
import { anyOf } from '#lib/db/conditions';
import type { TableKey } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { isConditionFailed, RateLimitedError } from '#lib/errors';
import { epochSeconds } from '#lib/identity/ttl';

/**
 * Failed logins slow guessing down without handing anyone a way to lock a user out:
 *
 * - per email and source address: after 10 failures the pair waits 1 minute, and each further failure
 *   doubles the wait (2, 4, 8 minutes, at most 15); a success, or a day without failures, starts over.
 *   Someone guessing from one address gets a handful of tries an hour; the owner, from another address,
 *   is not affected.
 * - per email from every address together: 100 failures in a 15-minute window (a distributed guess)
 *   close that email for the rest of the window, a threshold no single address reaches alone.
 * - per source address: 50 failures in a 15-minute window, whatever the emails.
 *
 * Refusals answer 429 with Retry-After, before any password is checked.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | pair | `THROTTLE#login-pair#<email lowercased>#<ip>` | `THROTTLE` | failures, last and lock time; TTL a day |
 * | window | `THROTTLE#<kind>#<value>` | `THROTTLE` | `window_start`, `failures`; TTL two windows on |
 *
 * Window kinds: `login-email` (the address lowercased) and `login-ip`. A window count is refused with
 * `other-window` when the stored window is not the current one, and a new window with `window-started`
 * when another request started it first; a pair count with `pair-stale` when its last failure is a day old.
 */
export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_FAILURES_PER_EMAIL = 100;
export const MAX_FAILURES_PER_IP = 50;
/** Failures of one email from one address before the first wait. */
export const PAIR_FAILURES_BEFORE_WAIT = 10;
const FIRST_WAIT_SECONDS = 60;
const LONGEST_WAIT_SECONDS = 15 * 60;
const PAIR_MEMORY_SECONDS = 24 * 3600;

export const throttleKey = (kind: string, value: string): TableKey => ({
  pk: `THROTTLE#${kind}#${value}`,
  sk: 'THROTTLE',
});

const pairKey = (email: string, ip: string) => throttleKey('login-pair', `${email.toLowerCase()}#${ip}`);

interface WindowItem {
  window_start: number;
  failures: number;
}

interface PairItem {
  failures: number;
  last_failure_at: number;
  locked_until?: number;
}

const inWindow = 'window_start = :w';
const notInWindow = anyOf('attribute_not_exists(window_start)', 'window_start <> :w');
const pairFresh = anyOf('attribute_not_exists(last_failure_at)', 'last_failure_at > :stale');

const windowOf = (now: Date) => Math.floor(epochSeconds(now) / LOGIN_WINDOW_SECONDS) * LOGIN_WINDOW_SECONDS;

const windowsFor = (email: string, ip: string) => [
  { key: throttleKey('login-email', email.toLowerCase()), limit: MAX_FAILURES_PER_EMAIL },
  { key: throttleKey('login-ip', ip), limit: MAX_FAILURES_PER_IP },
];

/** The wait after `failures` failures of one pair: none below the threshold, then doubling to a cap. */
export const pairWaitSeconds = (failures: number): number =>
  failures < PAIR_FAILURES_BEFORE_WAIT
    ? 0
    : Math.min(LONGEST_WAIT_SECONDS, FIRST_WAIT_SECONDS * 2 ** (failures - PAIR_FAILURES_BEFORE_WAIT));

/** Throws 429 when this email may not try from this address now; answers whether a pair record exists. */
export async function assertLoginAllowed(email: string, ip: string, now: Date): Promise<{ pairSeen: boolean }> {
  const window = windowOf(now);
  const seconds = epochSeconds(now);
  const windows = windowsFor(email, ip);
  const [pair, ...counts] = await getMany([pairKey(email, ip), ...windows.map((target) => target.key)]);
  const locked = (pair as PairItem | undefined)?.locked_until ?? 0;
  if (locked > seconds) throw new RateLimitedError(locked - seconds);
  for (const [index, item] of (counts as Array<WindowItem | undefined>).entries()) {
    const limit = (windows[index] as { limit: number }).limit;
    if (item && item.window_start === window && item.failures >= limit) {
      throw new RateLimitedError(window + LOGIN_WINDOW_SECONDS - seconds);
    }
  }
  return { pairSeen: pair !== undefined };
}

export async function recordLoginFailure(email: string, ip: string, now: Date): Promise<void> {
  const window = windowOf(now);
  const ttl = window + 2 * LOGIN_WINDOW_SECONDS;
  await Promise.all([
    countPairFailure(pairKey(email, ip), epochSeconds(now)),
    ...windowsFor(email, ip).map(({ key }) => countFailure(key, window, ttl)),
  ]);
}

/** A success starts the pair over, so the owner's next typo does not meet a doubled wait. */
export async function forgetLoginFailures(email: string, ip: string): Promise<void> {
  await table.delete({ Key: pairKey(email, ip) });
}

async function countPairFailure(key: TableKey, now: number): Promise<void> {
  const values = { ':one': 1, ':now': now, ':ttl': now + PAIR_MEMORY_SECONDS };
  let failures: number;
  try {
    const counted = await table.update({
      Key: key,
      UpdateExpression: 'ADD failures :one SET last_failure_at = :now, expires_at = :ttl',
      ConditionExpression: pairFresh,
      ExpressionAttributeValues: { ...values, ':stale': now - PAIR_MEMORY_SECONDS },
      ReturnValues: 'UPDATED_NEW',
      reason: 'pair-stale',
    });
    failures = Number(counted.Attributes?.failures);
  } catch (error) {
    if (!isConditionFailed(error, 'pair-stale')) throw error;
    // A day without failures: this one is the first again.
    await table.put({ Item: { ...key, failures: 1, last_failure_at: now, expires_at: values[':ttl'] } });
    failures = 1;
  }
  const wait = pairWaitSeconds(failures);
  if (wait === 0) return;
  await table.update({
    Key: key,
    UpdateExpression: 'SET locked_until = :until',
    ExpressionAttributeValues: { ':until': now + wait },
  });
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
