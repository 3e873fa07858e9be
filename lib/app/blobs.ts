import { join } from 'node:path';
import { s3BlobStore, s3Client } from '#lib/adapters/aws/s3-blobs';
import { fileBlobStore } from '#lib/adapters/local/file-blobs';
import { config } from '#lib/config';
import type { BlobStore } from '#lib/kernel/ports';

/**
 * Where organization backups are kept: the backups bucket in aws mode (BACKUP_BUCKET), DATA_DIR/backups
 * otherwise. Only the backups function wires it, so no other bundle carries the S3 client and no other
 * role may reach the bucket.
 */
export const blobs = (): BlobStore =>
  config.mode === 'aws' ? s3BlobStore(s3Client(config.region), config.backupBucket) : fileBlobStore(backupsDir());

/** The local store's folder: one subfolder per organization. */
export const backupsDir = (): string => join(config.dataDir, 'backups');
