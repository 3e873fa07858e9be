import { webcrypto } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { randomBase62 } from '#lib/crypto/secrets';
import { UnauthorizedError } from '#lib/errors';

/**
 * Access tokens: HS256 JWTs with `iss`, `aud`, `sub` (user id), `org` (organization), `tv` (the user's
 * token version, bumped by "log out everywhere"), `sid` (the login, whose refresh tokens logout revokes),
 * `jti` and a one-hour `exp`. Verification pins the
 * algorithm and requires `exp` (which jose does not by default).
 */
export const ISSUER = 'agent-operations';
export const AUDIENCE = 'agent-operations-api';
export const ACCESS_TOKEN_SECONDS = 3600;

export interface AccessClaims {
  userId: number;
  orgId: string;
  tokenVersion: number;
  jti: string;
  expiresAt: number;
  /** The login this token belongs to: its refresh token family, which logout ends with it. */
  sessionId?: string;
}

export async function issueAccessToken(
  secret: Uint8Array,
  subject: { userId: number; orgId: string; tokenVersion: number; sessionId?: string },
  now: Date,
): Promise<{ token: string; claims: AccessClaims }> {
  const issuedAt = Math.floor(now.getTime() / 1000);
  const expiresAt = issuedAt + ACCESS_TOKEN_SECONDS;
  const jti = randomBase62(22);
  const session = subject.sessionId === undefined ? {} : { sid: subject.sessionId };
  const token = await new SignJWT({ org: subject.orgId, tv: subject.tokenVersion, ...session })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(String(subject.userId))
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .setJti(jti)
    .sign(await hmacKey(secret));
  return { token, claims: { ...subject, jti, expiresAt } };
}

/**
 * The signing key as a Web Crypto key, imported once per secret: given the raw bytes, jose imports them
 * at every verification, a third of its time.
 */
const hmacKeys = new WeakMap<Uint8Array, Promise<webcrypto.CryptoKey>>();
function hmacKey(secret: Uint8Array): Promise<webcrypto.CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = webcrypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    hmacKeys.set(secret, key);
  }
  return key;
}

/** The claims of a valid token, or UnauthorizedError (one message for every reason). */
export async function verifyAccessToken(secret: Uint8Array, token: string, now: Date): Promise<AccessClaims> {
  try {
    const { payload } = await jwtVerify(token, await hmacKey(secret), {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      requiredClaims: ['exp', 'sub', 'jti'],
      currentDate: now,
    });
    const userId = Number(payload.sub);
    if (!Number.isInteger(userId) || typeof payload.org !== 'string' || typeof payload.tv !== 'number') {
      throw new UnauthorizedError('Invalid or expired credential');
    }
    return {
      userId,
      orgId: payload.org,
      tokenVersion: payload.tv,
      jti: payload.jti as string,
      expiresAt: payload.exp as number,
      ...(typeof payload.sid === 'string' ? { sessionId: payload.sid } : {}),
    };
  } catch (error) {
    if (error instanceof UnauthorizedError || error instanceof joseErrors.JOSEError) {
      throw new UnauthorizedError('Invalid or expired credential');
    }
    throw error;
  }
}
