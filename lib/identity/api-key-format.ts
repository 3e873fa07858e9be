import { randomBase62 } from '#lib/crypto/secrets';

/**
 * Organization API keys: `osk_live_` followed by 32 random bytes' worth of base62 (43 characters).
 * Only a SHA-256 of the key is stored; the key itself is shown once, on create, rotate and roll.
 */
export const API_KEY_PREFIX = 'osk_live_';
const KEY_BODY_LENGTH = 43; // 62^43 > 2^256

export const newApiKey = (): string => `${API_KEY_PREFIX}${randomBase62(KEY_BODY_LENGTH)}`;

/** `osk_live_…AbCd`: enough to recognise a key, useless to anyone who reads it. */
export const maskApiKey = (key: string): string => `${API_KEY_PREFIX}…${key.slice(-4)}`;
