import { createHmac } from 'node:crypto';
import { safeEqual } from '#lib/crypto/secrets';

/**
 * Signature checks of the inbound webhooks, as pure functions of the secret, the exact raw body and the
 * headers. They say why a check failed so that the caller can log it; the client only ever learns that
 * it failed.
 */

/** Events signed more than five minutes before (or after) the service's clock are replays or misconfigured. */
export const REPLAY_WINDOW_SECONDS = 5 * 60;

/** At most this many `v1=` candidates are tried, so a header cannot make the service compute without end. */
const MAX_SIGNATURE_CANDIDATES = 5;

export type VerificationFailure =
  | 'unknown_org'
  | 'no_secret'
  | 'missing_header'
  | 'malformed_header'
  | 'bad_signature'
  | 'stale_timestamp'
  | 'future_timestamp';

export type SignatureCheck = { ok: true } | { ok: false; reason: VerificationFailure };

const passed: SignatureCheck = { ok: true };
const failed = (reason: VerificationFailure): SignatureCheck => ({ ok: false, reason });

/** Lower-case hex HMAC-SHA256 of a UTF-8 message. */
export const hmacSha256Hex = (secret: string, message: string): string =>
  createHmac('sha256', secret).update(message, 'utf8').digest('hex');

/**
 * The git host's scheme: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>`.
 *
 * @example
 * checkHubSignature(secret, rawBody, headers['x-hub-signature-256']); // { ok: true }
 */
export function checkHubSignature(secret: string, rawBody: string, header: string | undefined): SignatureCheck {
  if (!header) return failed('missing_header');
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match?.[1]) return failed('malformed_header');
  return safeEqual(match[1].toLowerCase(), hmacSha256Hex(secret, rawBody)) ? passed : failed('bad_signature');
}

/**
 * The deploy and chat scheme: `X-Webhook-Timestamp: <unix seconds>` and
 * `X-Webhook-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body)>`. Several comma-separated
 * `v1=` values are accepted (any one may match) so that a sender can sign with an old and a new secret
 * while it is rotated. The timestamp must lie within five minutes of `now`, in either direction.
 *
 * @example
 * checkTimestampedSignature({ secret, rawBody, timestamp: '1767225600', signature: 'v1=5f…', now });
 */
export function checkTimestampedSignature(input: {
  secret: string;
  rawBody: string;
  timestamp: string | undefined;
  signature: string | undefined;
  now: Date;
}): SignatureCheck {
  const { timestamp, signature } = input;
  if (!timestamp || !signature) return failed('missing_header');
  if (!/^\d{1,12}$/.test(timestamp.trim())) return failed('malformed_header');
  const candidates = signature
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('v1='))
    .map((part) => part.slice(3).toLowerCase())
    .slice(0, MAX_SIGNATURE_CANDIDATES);
  if (candidates.length === 0) return failed('malformed_header');
  const expected = hmacSha256Hex(input.secret, `${timestamp.trim()}.${input.rawBody}`);
  // Every candidate is compared, so the time taken does not tell which one matched.
  let matched = false;
  for (const candidate of candidates) matched = safeEqual(candidate, expected) || matched;
  if (!matched) return failed('bad_signature');
  const age = Math.floor(input.now.getTime() / 1000) - Number(timestamp.trim());
  if (age > REPLAY_WINDOW_SECONDS) return failed('stale_timestamp');
  if (age < -REPLAY_WINDOW_SECONDS) return failed('future_timestamp');
  return passed;
}
