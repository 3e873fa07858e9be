/**
 * Expiry arithmetic for the table's TTL attribute `expires_at`, which DynamoDB reads as epoch seconds.
 * Identity records with a lifetime (tokens, invites, throttle windows, key uses) count in these units.
 */
export const DAY_SECONDS = 86_400;

/** @example epochSeconds(new Date('2026-01-01T00:00:00Z')) // 1767225600 */
export const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);
