import { randomBase62 } from '#lib/crypto/secrets';

/**
 * Organization API keys: `osk_live_`, the organization's id without its `org_` (16 characters), then 32
 * random bytes' worth of base62 (43 characters). Only a SHA-256 of the key is stored; the key itself is
 * shown once, on create, rotate and roll.
 *
 * The organization in the key is a hint, not a claim: a key is whatever its hash finds, and a key whose
 * record names another organization is no key. It lets authentication read the organization, and what
 * the route reads there, in the same round trip as the key's record. Keys made before it carry no
 * organization (43 characters after the prefix) and are read in two round trips.
 */
export const API_KEY_PREFIX = 'osk_live_';
const KEY_BODY_LENGTH = 43; // 62^43 > 2^256
const ORG_ID = /^org_([0-9A-Za-z]{16})$/;
const WITH_ORG = new RegExp(`^${API_KEY_PREFIX}([0-9A-Za-z]{16})[0-9A-Za-z]{${KEY_BODY_LENGTH}}$`);

export const newApiKey = (orgId: string): string => {
  const org = ORG_ID.exec(orgId)?.[1] ?? '';
  return `${API_KEY_PREFIX}${org}${randomBase62(KEY_BODY_LENGTH)}`;
};

/** The organization a key names, if it names one (see above: a hint until its record agrees). */
export function organizationHint(key: string): string | undefined {
  const org = WITH_ORG.exec(key)?.[1];
  return org ? `org_${org}` : undefined;
}

/** `osk_live_…AbCd`: enough to recognise a key, useless to anyone who reads it. */
export const maskApiKey = (key: string): string => `${API_KEY_PREFIX}…${key.slice(-4)}`;
