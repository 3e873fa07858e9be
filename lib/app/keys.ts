import { kmsClient, kmsKeys } from '#lib/adapters/aws/kms-keys';
import { fileKeys } from '#lib/adapters/local/file-keys';
import { config } from '#lib/config';
import type { KeyManagement } from '#lib/kernel/ports';

/**
 * Envelope-encryption keys: AWS KMS (KMS_KEY_ID) in aws mode, the local master key otherwise. Wired
 * only into the functions that read or write credentials, which alone get the IAM grant to use the key.
 */
export function keys(): KeyManagement {
  if (config.mode !== 'aws') return fileKeys({ dataDir: config.dataDir, masterKey: config.localMasterKey });
  if (!config.kmsKeyId) throw new Error('KMS_KEY_ID is required in aws mode');
  return kmsKeys(kmsClient(config.region), config.kmsKeyId);
}
