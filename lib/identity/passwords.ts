import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { config } from '#lib/config';

/**
 * Passwords: scrypt with a per-user salt; the raw password is never stored and never logged. New hashes
 * use N = 2^PASSWORD_SCRYPT_LOG_N (default 17, OWASP's minimum), r = 8, p = 1. The parameters travel
 * with each hash (`scrypt$N$r$p$<salt>$<hash>`), so a hash made with weaker ones still verifies and is
 * replaced at the user's next successful login (`needsRehash`).
 */
const R = 8;
const P = 1;
const KEY_LENGTH = 64;

function scryptAsync(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number) {
  // scrypt needs 128·N·r bytes; twice that leaves room without letting a stored N ask for anything.
  const maxmem = 256 * N * r;
  return new Promise<Buffer>((resolve, reject) =>
    scrypt(password, salt, keyLength, { N, r, p, maxmem }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** `scrypt$N$r$p$<salt b64>$<hash b64>`, with N = 2^logN (the configured cost unless given). */
export async function hashPassword(password: string, options: { logN?: number } = {}): Promise<string> {
  const N = 2 ** (options.logN ?? config.passwordScryptLogN);
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, N, R, P, KEY_LENGTH);
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(
    password,
    Buffer.from(salt, 'base64'),
    Number(n),
    Number(r),
    Number(p),
    expected.length,
  );
  return timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made with weaker parameters than new hashes get. */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(n) < 2 ** config.passwordScryptLogN || Number(r) < R || Number(p) < P;
}

/** A hash of a password nobody has, so that an unknown email costs the same time as a wrong password. */
let decoyHash: Promise<string> | undefined;
export const decoyPasswordHash = (): Promise<string> => {
  decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return decoyHash;
};
