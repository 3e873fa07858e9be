import { kmsClient, kmsKeys } from '#lib/adapters/aws/kms-keys';
import { fileKeys } from '#lib/adapters/local/file-keys';
import type { KeyManagement } from '#lib/adapters/ports';
import { config } from '#lib/config';

/**
 * Key management wiring, apart from lib/wiring.ts so that only the functions that handle secrets
 * bundle the KMS client (and only they get the IAM grant to use the key).
 */
let keys: KeyManagement | undefined;

/** Envelope-encryption keys: AWS KMS (KMS_KEY_ID) in aws mode, the local master key otherwise. */
export function keyManagement(): KeyManagement {
  if (!keys) {
    if (config.mode === 'aws') {
      if (!config.kmsKeyId) throw new Error('KMS_KEY_ID is required in aws mode');
      keys = kmsKeys(kmsClient(config.region), config.kmsKeyId);
    } else {
      keys = fileKeys({ dataDir: config.dataDir, masterKey: config.localMasterKey });
    }
  }
  return keys;
}
