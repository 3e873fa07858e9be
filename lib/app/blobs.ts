import { join } from 'node:path';
import { fileBlobStore } from '#lib/adapters/local/file-blobs';
import { deferred } from '#lib/app/deferred';
import { config } from '#lib/config';
import type { BlobStore } from '#lib/kernel/ports';

/**
 * Where organization backups are kept: the backups bucket in aws mode (BACKUP_BUCKET), DATA_DIR/backups
 * otherwise. Only the backups function wires it, so no other bundle carries the S3 client and no other
 * role may reach the bucket; the client is loaded at the first backup read or written.
 */
export const blobs = (): BlobStore =>
  config.mode === 'aws'
    ? deferred(
        async () => {
          const { s3BlobStore, s3Client } = await import('#lib/adapters/aws/s3-blobs');
          return s3BlobStore(s3Client(config.region), config.backupBucket);
        },
        ['put', 'get', 'head', 'list', 'delete'],
        { kind: 's3' },
      )
    : fileBlobStore(backupsDir());

/** The local store's folder: one subfolder per organization. */
export const backupsDir = (): string => join(config.dataDir, 'backups');
