import { fileKeys } from '#lib/adapters/local/file-keys';
import { deferred } from '#lib/app/deferred';
import { config } from '#lib/config';
import type { KeyManagement } from '#lib/kernel/ports';

/**
 * Envelope-encryption keys: AWS KMS (KMS_KEY_ID) in aws mode, its client loaded at the first key asked
 * for, the local master key otherwise. Wired only into the functions that read or write credentials,
 * which alone get the IAM grant to use the key.
 */
export function keys(): KeyManagement {
  if (config.mode !== 'aws') return fileKeys({ dataDir: config.dataDir, masterKey: config.localMasterKey });
  const keyId = config.kmsKeyId;
  if (!keyId) throw new Error('KMS_KEY_ID is required in aws mode');
  return deferred(
    async () => {
      const { kmsClient, kmsKeys } = await import('#lib/adapters/aws/kms-keys');
      return kmsKeys(kmsClient(config.region), keyId);
    },
    ['generateDataKey', 'decryptDataKey'],
    {},
  );
}
