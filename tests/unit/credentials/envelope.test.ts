import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileKeys } from '#lib/adapters/local/file-keys';
import { CredentialDecryptionError, type Envelope, open, seal } from '#lib/credentials/envelope';

const keys = fileKeys({ dataDir: mkdtempSync(join(tmpdir(), 'aos-keys-')) });

/** Flips one bit of a base64 field. */
const flip = (base64: string, index = 0): string => {
  const bytes = Buffer.from(base64, 'base64');
  bytes[index] = (bytes[index] as number) ^ 1;
  return bytes.toString('base64');
};

describe('envelope encryption with the local key adapter', () => {
  it('round-trips a value and never stores it in plain', async () => {
    const envelope = await seal(keys, 'org-1', 'llm.api_key', 'sk-very-secret');

    expect(JSON.stringify(envelope)).not.toContain('sk-very-secret');
    expect(envelope).toMatchObject({
      alg: 'AES-256-GCM',
      key_id: expect.stringMatching(/^local:[0-9a-f]{16}$/),
    });
    expect(await open(keys, 'org-1', 'llm.api_key', envelope)).toBe('sk-very-secret');
  });

  it('uses a fresh data key and IV for every write', async () => {
    const first = await seal(keys, 'org-1', 'k', 'same value');
    const second = await seal(keys, 'org-1', 'k', 'same value');
    expect(first.ciphertext).not.toBe(second.ciphertext);
    expect(first.wrapped_key).not.toBe(second.wrapped_key);
    expect(first.iv).not.toBe(second.iv);
  });

  it.each<[string, (envelope: Envelope) => Envelope]>([
    ['the ciphertext', (envelope) => ({ ...envelope, ciphertext: flip(envelope.ciphertext) })],
    ['the IV', (envelope) => ({ ...envelope, iv: flip(envelope.iv) })],
    ['the tag', (envelope) => ({ ...envelope, tag: flip(envelope.tag) })],
    [
      'a truncated tag',
      (envelope) => ({
        ...envelope,
        tag: Buffer.from(envelope.tag, 'base64').subarray(0, 12).toString('base64'),
      }),
    ],
    ['the wrapped key', (envelope) => ({ ...envelope, wrapped_key: flip(envelope.wrapped_key, 20) })],
    ['the key id', (envelope) => ({ ...envelope, key_id: 'local:0000000000000000' })],
  ])('refuses a tampered %s with CREDENTIAL_DECRYPTION_FAILED', async (_part, tamper) => {
    const envelope = await seal(keys, 'org-1', 'k', 'value');
    const error = await open(keys, 'org-1', 'k', tamper(envelope)).catch((caught) => caught);
    expect(error).toBeInstanceOf(CredentialDecryptionError);
    expect(error).toMatchObject({ status: 500, code: 'CREDENTIAL_DECRYPTION_FAILED', expose: true });
  });

  it('refuses a ciphertext moved to another organization or another name (additional data)', async () => {
    const envelope = await seal(keys, 'org-1', 'k', 'value');
    await expect(open(keys, 'org-2', 'k', envelope)).rejects.toBeInstanceOf(CredentialDecryptionError);
    await expect(open(keys, 'org-1', 'other', envelope)).rejects.toBeInstanceOf(CredentialDecryptionError);
  });

  it('cannot open what another master key sealed', async () => {
    const envelope = await seal(keys, 'org-1', 'k', 'value');
    const other = fileKeys({ dataDir: mkdtempSync(join(tmpdir(), 'aos-keys-')) });
    await expect(open(other, 'org-1', 'k', envelope)).rejects.toBeInstanceOf(CredentialDecryptionError);
  });

  it('takes the master key from LOCAL_MASTER_KEY when given, and refuses a malformed one', async () => {
    const given = Buffer.alloc(32, 7).toString('base64');
    const a = fileKeys({ dataDir: mkdtempSync(join(tmpdir(), 'aos-keys-')), masterKey: given });
    const b = fileKeys({ dataDir: mkdtempSync(join(tmpdir(), 'aos-keys-')), masterKey: given });
    expect(await open(b, 'o', 'k', await seal(a, 'o', 'k', 'shared'))).toBe('shared');
    const broken = fileKeys({ dataDir: mkdtempSync(join(tmpdir(), 'aos-keys-')), masterKey: 'c2hvcnQ=' });
    await expect(seal(broken, 'o', 'k', 'x')).rejects.toThrow('LOCAL_MASTER_KEY must be 32 bytes');
  });
});
