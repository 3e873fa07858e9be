import { tenantPk } from '#lib/db/keys';

/**
 * Where an organization's backups are recorded (writes and reads: lib/backups/backup-records.ts). The
 * files themselves are in the blob store (`BlobStore`, key `<org>/<filename>`); the table holds what
 * the API lists about them, the totals, the backup log and the mark of a restore under way. All of it
 * lives in a partition of its own, which the export leaves out: it describes the backups, is not part
 * of what they copy, and must outlive a loss of the data they copy.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | backup | `T#<org>#BACKUPS` | `BACKUP#<filename>` | names sort by time: read backwards, newest first |
 * | totals | `T#<org>#BACKUPS` | `STATS` | `backups` (kept, any status), `size_bytes` (of complete ones) |
 * | log line | `T#<org>#BACKUPS` | `LOG#<ISO time>#<random>` | TTL BACKUP_LOG_RETENTION_DAYS |
 * | restore under way | `T#<org>#BACKUPS` | `RESTORE` | `filename`, `started_at`: lets the same restore resume |
 */
export const backupKeys = {
  partition: (orgId: string): string => `${tenantPk(orgId)}#BACKUPS`,
  backup: (orgId: string, filename: string) => ({ pk: backupKeys.partition(orgId), sk: `BACKUP#${filename}` }),
  backupPrefix: 'BACKUP#',
  stats: (orgId: string) => ({ pk: backupKeys.partition(orgId), sk: 'STATS' }),
  logLine: (orgId: string, at: string, nonce: string) => ({
    pk: backupKeys.partition(orgId),
    sk: `LOG#${at}#${nonce}`,
  }),
  logPrefix: 'LOG#',
  restore: (orgId: string) => ({ pk: backupKeys.partition(orgId), sk: 'RESTORE' }),
};

/** Backups an organization may keep at once: a new one beyond this is refused until some are deleted. */
export const MAX_BACKUPS_KEPT = 100;
/** Days a backup log line is kept. */
export const BACKUP_LOG_RETENTION_DAYS = 90;
/** Lines GET /backups/logs answers (the specification's tail). */
export const BACKUP_LOG_TAIL = 100;

/**
 * A backup file's name: `backup-<organization id>-<yyyymmddThhmmssmmmZ>.json.gz`, nothing else. Names
 * that reach a path, a key or the blob store are checked against it first, so that separators, dots,
 * encodings and other characters are refused before anything is looked up.
 */
export const BACKUP_FILENAME_PATTERN = /^backup-([A-Za-z0-9_]{1,64})-(\d{8}T\d{9}Z)\.json\.gz$/;
export const BACKUP_FILENAME_MAX = 110;
export const BACKUP_CONTENT_TYPE = 'application/gzip';

/**
 * @example
 * backupFilename('org_1', new Date('2025-03-01T10:00:00.123Z')) // 'backup-org_1-20250301T100000123Z.json.gz'
 */
export function backupFilename(orgId: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:.]/g, '');
  const filename = `backup-${orgId}-${stamp}.json.gz`;
  if (!BACKUP_FILENAME_PATTERN.test(filename)) throw new Error(`No backup file name can hold ${orgId}`);
  return filename;
}

/** The organization a valid backup file name names, or undefined for any other string. */
export function filenameOrgId(filename: string): string | undefined {
  return BACKUP_FILENAME_PATTERN.exec(filename)?.[1];
}

/** Where the file of a backup is in the blob store. */
export const backupBlobKey = (orgId: string, filename: string): string => `${orgId}/${filename}`;
export const backupBlobFolder = (orgId: string): string => `${orgId}/`;

/** `in_progress` from the trigger's first write until its file is stored and its record completed. */
export type BackupStatus = 'in_progress' | 'complete';

export interface BackupItem {
  pk: string;
  sk: string;
  filename: string;
  status: BackupStatus;
  /** Bytes of the compressed file; 0 until complete. */
  size_bytes: number;
  /** SHA-256 (hex) of the compressed file as written; null until complete. */
  sha256: string | null;
  item_count: number;
  created_at: string;
  completed_at: string | null;
  /** `user:<id>` or `api_key:<id>`. */
  created_by: string;
}

export interface Backup {
  filename: string;
  status: BackupStatus;
  size_bytes: number;
  sha256: string | null;
  item_count: number;
  created_at: string;
  completed_at: string | null;
  created_by: string;
}

export const toBackup = (item: BackupItem): Backup => ({
  filename: item.filename,
  status: item.status,
  size_bytes: item.size_bytes,
  sha256: item.sha256 ?? null,
  item_count: item.item_count,
  created_at: item.created_at,
  completed_at: item.completed_at ?? null,
  created_by: item.created_by,
});

export interface BackupLogItem {
  pk: string;
  sk: string;
  level: 'info' | 'error';
  message: string;
  created_at: string;
  expires_at: number;
}

export interface RestoreMarkItem {
  pk: string;
  sk: string;
  filename: string;
  started_at: string;
  started_by: string;
}
