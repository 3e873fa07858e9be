import { sha256 } from '#lib/crypto/secrets';
import { allOf, itemExists } from '#lib/db/conditions';
import type { TableKey } from '#lib/db/keys';
import { table } from '#lib/db/table';

/**
 * Sessions as stored: refresh tokens and their families, revoked access tokens and password resets.
 * Tokens are stored only as their SHA-256; every record expires by TTL.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | refresh token | `REFRESH#<sha256>` | `REFRESH` | `used` once exchanged; TTL at its expiry |
 * | refresh family | `RFAMILY#<id>` | `RFAMILY` | `revoked` when a spent token came back; TTL |
 * | revoked access token | `REVOKED#<jti>` | `REVOKED` | TTL at the token's expiry |
 * | password reset | `RESET#<sha256>` | `RESET` | `user_id`; TTL |
 *
 * Reasons a session write is refused with: `token-spent` (the refresh token was exchanged already) and
 * `reset-unusable` (the reset token is unknown, used or expired).
 */
export const sessionKeys = {
  refreshToken: (tokenHash: string): TableKey => ({ pk: `REFRESH#${tokenHash}`, sk: 'REFRESH' }),
  refreshFamily: (familyId: string): TableKey => ({ pk: `RFAMILY#${familyId}`, sk: 'RFAMILY' }),
  revokedToken: (jti: string): TableKey => ({ pk: `REVOKED#${jti}`, sk: 'REVOKED' }),
  passwordReset: (tokenHash: string): TableKey => ({ pk: `RESET#${tokenHash}`, sk: 'RESET' }),
};

/** A refresh token as stored under its hash. */
export interface RefreshItem {
  user_id: number;
  org_id: string;
  /** Every token descended from one login; a replayed token revokes them all. */
  family_id: string;
  /** The user's token version when the login happened: "log out everywhere" outdates it. */
  token_version: number;
  used: boolean;
  expires_at: number;
}

const unused = 'used = :false';
const resetUnexpired = allOf(itemExists, 'expires_at > :now');

export async function saveRefreshToken(token: string, item: RefreshItem): Promise<void> {
  await table.put({ Item: { ...sessionKeys.refreshToken(sha256(token)), ...item } });
}

export async function getRefreshToken(token: string): Promise<RefreshItem | undefined> {
  const found = await table.get({ Key: sessionKeys.refreshToken(sha256(token)) });
  return found.Item as RefreshItem | undefined;
}

/** Spends a refresh token: exactly one exchange can win, even when two race (`token-spent`). */
export async function spendRefreshToken(token: string): Promise<void> {
  await table.update({
    Key: sessionKeys.refreshToken(sha256(token)),
    UpdateExpression: 'SET used = :true',
    ConditionExpression: unused,
    ExpressionAttributeValues: { ':true': true, ':false': false },
    reason: 'token-spent',
  });
}

export async function isFamilyRevoked(familyId: string): Promise<boolean> {
  const family = await table.get({ Key: sessionKeys.refreshFamily(familyId) });
  return Boolean(family.Item?.revoked);
}

/** Revokes every refresh token of a family; the marker lives as long as the token that revealed the theft. */
export async function revokeFamily(familyId: string, expiresAt: number): Promise<void> {
  await table.put({ Item: { ...sessionKeys.refreshFamily(familyId), revoked: true, expires_at: expiresAt } });
}

/** Refuses an access token from now on; the marker lives until the token would have expired anyway. */
export async function revokeAccessToken(jti: string, expiresAt: number | undefined): Promise<void> {
  await table.put({ Item: { ...sessionKeys.revokedToken(jti), expires_at: expiresAt } });
}

export async function savePasswordReset(token: string, userId: number, expiresAt: number): Promise<void> {
  await table.put({
    Item: { ...sessionKeys.passwordReset(sha256(token)), user_id: userId, expires_at: expiresAt },
  });
}

/** Uses up a reset token, once and before it expires (`reset-unusable`); answers the user it was for. */
export async function spendPasswordReset(token: string, nowSeconds: number): Promise<number> {
  const spent = await table.delete({
    Key: sessionKeys.passwordReset(sha256(token)),
    ConditionExpression: resetUnexpired,
    ExpressionAttributeValues: { ':now': nowSeconds },
    ReturnValues: 'ALL_OLD',
    reason: 'reset-unusable',
  });
  return Number(spent.Attributes?.user_id);
}
