import { decodeJwt, exportJWK, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

/**
 * Access tokens made by hand, for tests of what the service's verifier refuses. Each starts from a token
 * the service issued (its real claims: iss, aud, sub, org, tv, sid, jti, iat, exp) and changes one thing,
 * so that a refusal can only come from that change: `forgeToken(token)` with no changes must be accepted.
 */

/** The signing secret of the test configuration (vitest.config.ts), the one the service signs with. */
export const serviceSecret = (): Uint8Array => new TextEncoder().encode(process.env.JWT_SECRET as string);

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The claims of `token` with `changes` applied; a change to `undefined` removes the claim. */
export function claimsOf(token: string, changes: Record<string, unknown> = {}): JWTPayload {
  const claims: Record<string, unknown> = { ...decodeJwt(token), ...changes };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return claims as JWTPayload;
}

/**
 * `token` re-signed with `changes` to its claims, by default with the service's own secret and algorithm.
 *
 * @example
 * const expired = await forgeToken(user.token, { exp: nowSeconds() - 60 });
 */
export async function forgeToken(
  token: string,
  changes: Record<string, unknown> = {},
  options: { secret?: Uint8Array; alg?: 'HS256' | 'HS384' | 'HS512'; header?: Record<string, unknown> } = {},
): Promise<string> {
  return new SignJWT(claimsOf(token, changes))
    .setProtectedHeader({ typ: 'JWT', ...options.header, alg: options.alg ?? 'HS256' })
    .sign(options.secret ?? serviceSecret());
}

/** A token of `header` and `claims` as given, with `signature` (empty: an unsigned `alg: none` token). */
export const rawToken = (header: Record<string, unknown>, claims: JWTPayload, signature = ''): string =>
  `${base64url(header)}.${base64url(claims)}.${signature}`;

/**
 * Tokens of the asymmetric algorithms, signed with key pairs of their own whose public halves ride in
 * the header (`jwk`): a verifier that chose its algorithm or its key from the token would accept them.
 * Also an HS256 token keyed with such a public key's PEM, the classic RS/HS confusion.
 */
export async function asymmetricTokens(token: string): Promise<Record<string, string>> {
  const claims = claimsOf(token);
  const tokens: Record<string, string> = {};
  for (const alg of ['RS256', 'ES256'] as const) {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const jwk = await exportJWK(publicKey);
    tokens[alg] = await new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT', jwk }).sign(privateKey);
    if (alg === 'RS256') {
      const pem = await exportSPKI(publicKey);
      tokens['HS256 keyed with a public key'] = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', jwk })
        .sign(new TextEncoder().encode(pem));
    }
  }
  return tokens;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
