import * as z from 'zod';
import { MAX_EXPORT_ITEMS } from '#lib/backups/backup-export';
import {
  BACKUP_FILENAME_MAX,
  BACKUP_FILENAME_PATTERN,
  BACKUP_LOG_TAIL,
  MAX_BACKUPS_KEPT,
} from '#lib/backups/backup-keys';
import { DOWNLOAD_MAX_BYTES } from '#lib/backups/backups';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';

/** Backups of the organization the request acts in: the `backups` function. */

const group = 'backups';
const tags = ['Backups'];

const WHO = 'Organization admins and owners (instance admins, API keys with the `admin` scope).';

const filename = z
  .string()
  .max(BACKUP_FILENAME_MAX)
  .regex(BACKUP_FILENAME_PATTERN, 'must be a backup file name: backup-<organization id>-<yyyymmddThhmmssmmmZ>.json.gz')
  .meta({
    description:
      'Exactly a backup file name of the organization the request acts in; anything else (separators, dots, ' +
      'encoded characters) is 400, and a backup file name of another organization is 404, before any storage ' +
      'is read.',
    example: 'backup-org_1a2B3c4D5e6F7g8H-20250301T100000123Z.json.gz',
  });

const params = z.object({ filename });

export const BackupRecord = z
  .object({
    filename: z.string(),
    status: z.enum(['in_progress', 'complete']).meta({
      description: '`in_progress` while its file is written (the trigger answers once it is complete)',
    }),
    size_bytes: z.number().int().min(0).meta({ description: 'Size of the compressed file; 0 until complete' }),
    sha256: z.string().nullable().meta({ description: 'SHA-256 (hex) of the compressed file as written' }),
    item_count: z.number().int().min(0).meta({ description: 'Table items the export holds' }),
    created_at: z.string(),
    completed_at: z.string().nullable(),
    created_by: z.string().meta({ description: '`user:<id>` or `api_key:<id>`' }),
  })
  .meta({ id: 'Backup' });

export const listBackups = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/backups',
  auth: 'bearer',
  summary: 'List the organization’s backups, newest first',
  description: `${WHO} An organization keeps at most ${MAX_BACKUPS_KEPT} backups.`,
  query: pagingQuery,
  envelope: 'list',
  response: BackupRecord,
});

export const getBackupStats = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/backups/stats',
  auth: 'bearer',
  summary: 'How many backups are kept, their total size and the last one',
  description: `${WHO} \`count\` counts every backup kept (in progress too); the size those complete.`,
  response: z
    .object({
      count: z.number().int().min(0),
      total_size_bytes: z.number().int().min(0),
      last_backup: BackupRecord.nullable().meta({ description: 'The newest complete backup' }),
    })
    .meta({ id: 'BackupStats' }),
});

export const getBackupLogs = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/backups/logs',
  auth: 'bearer',
  summary: `The last ${BACKUP_LOG_TAIL} lines of the organization’s backup log`,
  description: `${WHO} Oldest first, each \`<ISO time> <INFO|ERROR> <message>\`; lines are kept 90 days.`,
  response: z.object({ lines: z.array(z.string()) }).meta({ id: 'BackupLog' }),
});

const RemoteCopy = z.object({ size_bytes: z.number().int(), sha256: z.string(), last_modified: z.string() });

export const getBackupRemoteStatus = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/backups/remote-status',
  auth: 'bearer',
  summary: 'The latest remote backup and a sync check of the store against the records',
  description:
    `${WHO} The store is the remote: the backups S3 bucket when deployed, the folder \`DATA_DIR/backups/<org>\` ` +
    'locally. The newest complete backup’s file is read and its size and SHA-256 compared with the record; the ' +
    'store’s files are compared by name with the records.',
  response: z
    .object({
      store: z.enum(['s3', 'local']),
      checked_at: z.string(),
      latest: z
        .object({
          filename: z.string(),
          created_at: z.string(),
          recorded: z.object({ size_bytes: z.number().int(), sha256: z.string().nullable() }),
          remote: RemoteCopy.nullable().meta({ description: 'null when the store does not hold the file' }),
          in_sync: z.boolean(),
        })
        .nullable(),
      recorded_count: z.number().int().min(0).meta({ description: 'Complete backups recorded' }),
      remote_count: z.number().int().min(0).meta({ description: 'Backup files of the organization in the store' }),
      missing_remotely: z.array(z.string()),
      not_recorded: z.array(z.string()),
      listing_complete: z.boolean(),
      in_sync: z.boolean(),
    })
    .meta({ id: 'BackupRemoteStatus' }),
});

export const downloadBackup = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/backups/{filename}/download',
  auth: 'bearer',
  summary: 'Download a backup file (gzip-compressed JSON)',
  description:
    `${WHO} The file as stored, \`Content-Type: application/gzip\`, \`Content-Disposition: attachment\`, and ` +
    `\`X-Backup-SHA256\` with its recorded digest. A response carries at most ${DOWNLOAD_MAX_BYTES} bytes ` +
    '(API Gateway’s limit, with room): a larger backup is 422 and is read from the store directly.',
  params,
  envelope: 'raw',
  contentType: 'application/gzip',
  errors: [404, 409, 422],
});

export const deleteBackup = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/backups/{filename}',
  auth: 'bearer',
  summary: 'Delete a backup: its record and its file',
  description: WHO,
  params,
  envelope: 'deleted',
  response: BackupRecord,
  errors: [404, 409],
});

export const triggerBackup = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/backups/trigger',
  auth: 'bearer',
  summary: 'Back the organization up now',
  description:
    `${WHO} Exports every item the organization owns (its partitions and the lookups its records name) with ` +
    'paged Queries, as a gzip-compressed JSON file written to the store as it is read, and answers the ' +
    `complete backup record. 409 when ${MAX_BACKUPS_KEPT} backups are kept already; 422 when the organization ` +
    `holds more than ${MAX_EXPORT_ITEMS} items (nothing is stored).`,
  response: BackupRecord,
  errors: [409, 422],
});

export const restoreBackup = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/backups/{filename}/restore',
  auth: 'bearer',
  summary: 'Restore a backup into the (empty) organization it was taken of',
  description:
    'Organization owner only. Disaster recovery: writes the backup’s items back, unchanged, into the same ' +
    'organization after its data was lost. The organization must be empty (409 otherwise): it holds nothing but ' +
    'its own record, its members and API key uses; its activity log and log lines written since are kept, the ' +
    'backup’s written beside them. The file is checked whole first (size, SHA-256, format, every item this ' +
    'organization’s: 422 otherwise). A restore that stopped midway resumes when asked again for the same file.',
  params,
  response: z
    .object({
      filename: z.string(),
      restored_items: z.number().int().min(0),
      kept_identity_records: z.number().int().min(0),
      skipped_lookups: z.number().int().min(0),
      restored_at: z.string(),
    })
    .meta({ id: 'BackupRestore' }),
  errors: [404, 409, 422],
});
