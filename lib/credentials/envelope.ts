import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppError } from '#lib/errors';
import type { KeyContext, KeyManagement } from '#lib/kernel/ports';

/**
 * Envelope encryption of one secret value: a fresh data key per write (from the key service),
 * AES-256-GCM with a 96-bit random IV, the additional data `<orgId>:<key>` so a ciphertext cannot be
 * moved to another organization or name, and the wrapped data key stored beside it with the id of the
 * master key that wrapped it.
 */
export interface Envelope {
  alg: 'AES-256-GCM';
  ciphertext: string;
  iv: string;
  tag: string;
  wrapped_key: string;
  key_id: string;
}

export class CredentialDecryptionError extends AppError {
  constructor(cause?: unknown) {
    super(500, 'CREDENTIAL_DECRYPTION_FAILED', 'The credential could not be decrypted', {
      cause,
      expose: true,
    });
    this.name = 'CredentialDecryptionError';
  }
}

const additionalData = (orgId: string, key: string) => Buffer.from(`${orgId}:${key}`);
const keyContext = (orgId: string, key: string): KeyContext => ({ org: orgId, credential: key });

export async function seal(keys: KeyManagement, orgId: string, key: string, value: string): Promise<Envelope> {
  const dataKey = await keys.generateDataKey(keyContext(orgId, key));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', dataKey.plaintext, iv);
  cipher.setAAD(additionalData(orgId, key));
  const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  dataKey.plaintext.fill(0);
  return {
    alg: 'AES-256-GCM',
    ciphertext: ciphertext.toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    wrapped_key: Buffer.from(dataKey.wrapped).toString('base64'),
    key_id: dataKey.keyId,
  };
}

/** The plain value, or CredentialDecryptionError for any tampering or a key that does not fit. */
export async function open(keys: KeyManagement, orgId: string, key: string, envelope: Envelope): Promise<string> {
  try {
    const dataKey = await keys.decryptDataKey(
      Buffer.from(envelope.wrapped_key, 'base64'),
      envelope.key_id,
      keyContext(orgId, key),
    );
    // A full 16-byte tag only: GCM would otherwise accept a truncated one.
    const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(envelope.iv, 'base64'), {
      authTagLength: 16,
    });
    decipher.setAAD(additionalData(orgId, key));
    decipher.setAuthTag(Buffer.from(envelope.tag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(envelope.ciphertext, 'base64')), decipher.final()]);
    return plain.toString('utf8');
  } catch (error) {
    throw new CredentialDecryptionError(error);
  }
}
