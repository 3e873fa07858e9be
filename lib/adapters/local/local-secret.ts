import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A secret generated once and kept in the data directory (mode 0600), for local mode: the same
 * instance keeps its sessions across restarts without anyone choosing a secret.
 */
export function localSecret(dataDir: string, name: string, bytes = 48): string {
  const file = join(dataDir, name);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(bytes).toString('base64url');
    try {
      // `wx`: if another process created it meanwhile, keep theirs.
      writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
      return secret;
    } catch {
      return readFileSync(file, 'utf8').trim();
    }
  }
}
