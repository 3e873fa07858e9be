import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyContext, KeyManagement } from '#lib/kernel/ports';

/**
 * The local key-management adapter: a 32-byte master key from LOCAL_MASTER_KEY (base64) or from
 * `<dataDir>/master.key` (created once, mode 0600). Data keys are wrapped with AES-256-GCM under the
 * master key, the context as additional data. The key id names the master key by a digest of it, so a
 * credential wrapped by another master key is recognised as such.
 */
export function fileKeys(options: { dataDir: string; masterKey?: string }): KeyManagement {
  let master: Buffer | undefined;
  const masterKey = (): Buffer => {
    master ??= options.masterKey ? decodeMasterKey(options.masterKey) : readOrCreate(options.dataDir);
    return master;
  };
  const keyId = () => `local:${createHash('sha256').update(masterKey()).digest('hex').slice(0, 16)}`;
  const aad = (context: KeyContext) => Buffer.from(JSON.stringify(Object.entries(context).sort()));

  return {
    async generateDataKey(context) {
      const plaintext = randomBytes(32);
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', masterKey(), iv);
      cipher.setAAD(aad(context));
      const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      // wrapped = iv (12) | tag (16) | sealed key (32)
      const wrapped = Buffer.concat([iv, cipher.getAuthTag(), sealed]);
      return { plaintext, wrapped, keyId: keyId() };
    },
    async decryptDataKey(wrapped, id, context) {
      if (id !== keyId()) throw new Error('The data key was wrapped by another master key');
      const bytes = Buffer.from(wrapped);
      const decipher = createDecipheriv('aes-256-gcm', masterKey(), bytes.subarray(0, 12), {
        authTagLength: 16,
      });
      decipher.setAAD(aad(context));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
    },
  };
}

function decodeMasterKey(encoded: string): Buffer {
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== 32) throw new Error('LOCAL_MASTER_KEY must be 32 bytes, base64-encoded');
  return key;
}

function readOrCreate(dataDir: string): Buffer {
  const file = join(dataDir, 'master.key');
  try {
    return decodeMasterKey(readFileSync(file, 'utf8').trim());
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (raced) {
      if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
    }
    return decodeMasterKey(readFileSync(file, 'utf8').trim());
  }
}
