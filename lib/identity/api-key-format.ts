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

/**
 * The lookup item under `APIKEYHASH#<sha256>`: everything authentication needs in one read. It mirrors
 * the key record's `scopes`, `active` and `expires_at`, so every change to those writes both items in
 * one transaction.
 */
export interface ApiKeyLookupItem {
  pk: string;
  sk: string;
  org_id: string;
  key_id: string;
  scopes: string[];
  active: boolean;
  /** The key's own expiry (ISO), if it has one. */
  key_expires_at?: string;
  /** After a rotation, the old key works until this instant (ISO). */
  grace_until?: string;
  /** TTL (epoch seconds) so that a rotated key's lookup item disappears after its grace. */
  expires_at?: number;
}
