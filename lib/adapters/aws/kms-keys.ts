import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import type { KeyManagement } from '#lib/kernel/ports';

/**
 * The AWS key-management adapter: data keys from KMS GenerateDataKey (AES_256) under the configured
 * key, unwrapped with Decrypt. The encryption context binds each data key to its organization and
 * credential; KMS refuses to unwrap it under any other context.
 */
export function kmsKeys(client: KMSClient, keyId: string): KeyManagement {
  return {
    async generateDataKey(context) {
      const result = await client.send(
        new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: context }),
      );
      if (!result.Plaintext || !result.CiphertextBlob || !result.KeyId) {
        throw new Error('KMS GenerateDataKey returned no key');
      }
      return { plaintext: result.Plaintext, wrapped: result.CiphertextBlob, keyId: result.KeyId };
    },
    async decryptDataKey(wrapped, wrappingKeyId, context) {
      const result = await client.send(
        new DecryptCommand({ CiphertextBlob: wrapped, KeyId: wrappingKeyId, EncryptionContext: context }),
      );
      if (!result.Plaintext) throw new Error('KMS Decrypt returned no key');
      return result.Plaintext;
    },
  };
}

export const kmsClient = (region: string) => new KMSClient({ region });
