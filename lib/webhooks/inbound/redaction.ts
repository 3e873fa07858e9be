/**
 * Redaction of webhook payloads before they are stored: a stored payload helps troubleshooting, and
 * must not become a second copy of someone's credentials or contact details.
 */

export const REDACTED = '[REDACTED]';

/**
 * Keys whose values are replaced whole, whatever they hold. Matched anywhere in the key and in any case,
 * so `access_token`, `client_secret`, `X-Api-Key` and `author.email` are all caught; a harmless key
 * caught by accident costs a troubleshooter one value, a secret let through costs far more.
 */
const SENSITIVE_KEY = /token|secret|passw(?:or)?d|authorization|api[-_]?key|signature|e-?mail/i;

/**
 * Email addresses inside any string value (a chat text, a commit author line). Every quantifier is
 * bounded, so a long string cannot make the match backtrack for seconds.
 */
const EMAIL_ADDRESS = /[A-Za-z0-9._%+'-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}/g;

/**
 * DynamoDB nests maps and lists at most 32 levels deep; payloads deeper than this are cut (and say so)
 * rather than failing the write that records the event.
 */
const MAX_DEPTH = 24;
export const TOO_DEEP = '[TOO_DEEP]';

export const isSensitiveKey = (key: string): boolean => SENSITIVE_KEY.test(key);

/**
 * A copy of `value` with the values of sensitive keys and every email address replaced by `[REDACTED]`.
 *
 * @example
 * redact({ pusher: { name: 'octocat', email: 'octo@example.com' }, text: 'mail me at a@b.io' });
 * // { pusher: { name: 'octocat', email: '[REDACTED]' }, text: 'mail me at [REDACTED]' }
 */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.includes('@') ? value.replace(EMAIL_ADDRESS, REDACTED) : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  // No prototype: a key named __proto__ in a payload is kept as a key, not taken as the copy's prototype.
  const copy: Record<string, unknown> = Object.create(null);
  for (const [key, inner] of Object.entries(value)) {
    copy[key] = isSensitiveKey(key) ? REDACTED : redact(inner, depth + 1);
  }
  return copy;
}
