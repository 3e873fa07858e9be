import { recordActivity } from '#lib/activity/activity-log';
import { randomBase62, randomToken } from '#lib/crypto/secrets';
import { isConditionFailed, UnauthorizedError, ValidationError } from '#lib/errors';
import { requireUser } from '#lib/identity/access';
import { ACCESS_TOKEN_SECONDS, issueAccessToken } from '#lib/identity/access-tokens';
import { assertLoginAllowed, forgetLoginFailures, recordLoginFailure } from '#lib/identity/login-throttle';
import { getMembership } from '#lib/identity/memberships';
import { decoyPasswordHash, hashPassword, needsRehash, verifyPassword } from '#lib/identity/passwords';
import {
  getRefreshToken,
  isFamilyRevoked,
  type RefreshItem,
  revokeAccessToken,
  revokeFamily,
  savePasswordReset,
  saveRefreshToken,
  spendPasswordReset,
  spendRefreshToken,
} from '#lib/identity/session-records';
import { DAY_SECONDS, epochSeconds } from '#lib/identity/ttl';
import {
  bumpTokenVersion,
  getUserItem,
  setPassword,
  toUser,
  type User,
  type UserItem,
  upgradePasswordHash,
  userIdByEmail,
} from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';

/**
 * Sessions: an access JWT (one hour) and a rotating refresh token (30 days). Every refresh hands out a
 * new refresh token and spends the old one; presenting a spent one again means it was stolen or
 * replayed, and the whole family (every token descended from that login) is revoked.
 */
export const REFRESH_TOKEN_DAYS = 30;
export const RESET_TOKEN_MINUTES = 60;

export interface Session {
  token: string;
  refresh_token: string;
  expires_in: number;
  user: User;
  organization_id: string;
}

const wrongCredentials = () => new UnauthorizedError('Wrong email or password');
const resetUnusable = () =>
  new ValidationError('The reset token is invalid or expired', [{ path: 'token', message: 'is invalid or expired' }]);

export async function login(
  ctx: RequestContext,
  input: { email: string; password: string; sourceIp: string },
  secret: Uint8Array,
): Promise<Session> {
  const now = ctx.ports.clock.now();
  const { pairSeen } = await assertLoginAllowed(input.email, input.sourceIp, now);
  const userId = await userIdByEmail(input.email);
  const user = userId === undefined ? undefined : await getUserItem(userId);
  // An unknown email costs one scrypt too, so timing tells nothing about which addresses exist.
  const valid = await verifyPassword(input.password, user?.password_hash ?? (await decoyPasswordHash()));
  if (!user || !valid) {
    await recordLoginFailure(input.email, input.sourceIp, now);
    throw wrongCredentials();
  }
  await Promise.all([
    pairSeen ? forgetLoginFailures(input.email, input.sourceIp) : undefined,
    needsRehash(user.password_hash) ? upgradeHash(user, input.password) : undefined,
    // In the organization the session starts in; never the password, the tokens or the email address.
    recordActivity(
      user.personal_org_id,
      {
        actor_type: 'user',
        actor_id: `user:${user.id}`,
        action: 'user.login',
        entity_type: 'user',
        entity_id: String(user.id),
        metadata: { source_ip: input.sourceIp },
      },
      now,
    ),
  ]);
  return startSession(ctx, user, user.personal_org_id, randomBase62(16), secret);
}

/** Re-hashes a password verified against weaker parameters; a reset that won the race keeps its hash. */
async function upgradeHash(user: UserItem, password: string): Promise<void> {
  try {
    await upgradePasswordHash({ userId: user.id, from: user.password_hash, to: await hashPassword(password) });
  } catch (error) {
    if (!isConditionFailed(error, 'hash-changed')) throw error;
  }
}

async function startSession(
  ctx: RequestContext,
  user: UserItem,
  orgId: string,
  familyId: string,
  secret: Uint8Array,
): Promise<Session> {
  const now = ctx.ports.clock.now();
  const access = await issueAccessToken(
    secret,
    { userId: user.id, orgId, tokenVersion: user.token_version ?? 0, sessionId: familyId },
    now,
  );
  const refreshToken = `rt_${randomToken(32)}`;
  const item: RefreshItem = {
    user_id: user.id,
    org_id: orgId,
    family_id: familyId,
    token_version: user.token_version ?? 0,
    used: false,
    expires_at: epochSeconds(now) + REFRESH_TOKEN_DAYS * DAY_SECONDS,
  };
  await saveRefreshToken(refreshToken, item);
  return {
    token: access.token,
    refresh_token: refreshToken,
    expires_in: ACCESS_TOKEN_SECONDS,
    user: toUser(user),
    organization_id: orgId,
  };
}

/** Exchanges a refresh token for a new session; a spent token revokes its family. */
export async function refresh(ctx: RequestContext, refreshToken: string, secret: Uint8Array): Promise<Session> {
  const now = ctx.ports.clock.now();
  const item = await getRefreshToken(refreshToken);
  if (!item || item.expires_at <= epochSeconds(now)) throw invalidRefresh();
  if (await isFamilyRevoked(item.family_id)) throw invalidRefresh();
  try {
    await spendRefreshToken(refreshToken);
  } catch (error) {
    if (!isConditionFailed(error, 'token-spent')) throw error;
    await revokeFamily(item.family_id, item.expires_at);
    throw invalidRefresh();
  }
  const user = await getUserItem(item.user_id);
  if (!user || (user.token_version ?? 0) !== item.token_version) throw invalidRefresh();
  // The session stays in its organization while the user is still a member there.
  const orgId = (await getMembership(item.org_id, user.id)) ? item.org_id : user.personal_org_id;
  return startSession(ctx, user, orgId, item.family_id, secret);
}

const invalidRefresh = () => new UnauthorizedError('Invalid or expired refresh token');

/**
 * Ends the session of this request: its access token at once (a revocation marker that lives until the
 * token would have expired) and its refresh tokens (the login's family, revoked for as long as a refresh
 * token lives). Other sessions of the user go on. With `allDevices`, every token of the user ends by
 * bumping the user's token version, which refresh tokens carry too.
 */
export async function logout(
  ctx: RequestContext,
  allDevices: boolean,
): Promise<{ success: true; all_devices: boolean }> {
  const principal = requireUser(ctx);
  if (allDevices) {
    await bumpTokenVersion(principal.userId);
  } else {
    await Promise.all([
      principal.tokenId ? revokeAccessToken(principal.tokenId, principal.tokenExpiresAt) : undefined,
      principal.sessionId
        ? revokeFamily(principal.sessionId, epochSeconds(ctx.ports.clock.now()) + REFRESH_TOKEN_DAYS * DAY_SECONDS)
        : undefined,
    ]);
  }
  return { success: true, all_devices: allDevices };
}

/** Always the same answer, whether or not the address exists; a reset link goes out only if it does. */
export async function forgotPassword(ctx: RequestContext, email: string): Promise<{ success: true; message: string }> {
  const answer = {
    success: true as const,
    message: 'If the address is registered, a reset link has been sent',
  };
  const userId = await userIdByEmail(email);
  const user = userId === undefined ? undefined : await getUserItem(userId);
  if (!user) return answer;
  const token = randomToken(32);
  const now = ctx.ports.clock.now();
  await savePasswordReset(token, user.id, epochSeconds(now) + RESET_TOKEN_MINUTES * 60);
  await ctx.ports.email.send({
    to: user.email,
    subject: 'Reset your password',
    text: [
      `Someone asked to reset the password of ${user.username}.`,
      `To choose a new one, send POST ${ctx.baseUrl}/auth/reset-password` +
        ` with {"token": "${token}", "password": "…"}.`,
      `The token works once, for ${RESET_TOKEN_MINUTES} minutes. If it was not you, ignore this message.`,
    ].join('\n\n'),
  });
  return answer;
}

/** Spends a reset token (once), sets the new password and ends every existing session. */
export async function resetPassword(ctx: RequestContext, token: string, password: string): Promise<{ success: true }> {
  const now = ctx.ports.clock.now();
  let userId: number;
  try {
    userId = await spendPasswordReset(token, epochSeconds(now));
  } catch (error) {
    if (!isConditionFailed(error, 'reset-unusable')) throw error;
    throw resetUnusable();
  }
  const passwordHash = await hashPassword(password);
  try {
    await setPassword({ userId, passwordHash, now: now.toISOString() });
  } catch (error) {
    // The account was erased after the token was sent.
    if (!isConditionFailed(error, 'user-missing')) throw error;
    throw resetUnusable();
  }
  return { success: true };
}
