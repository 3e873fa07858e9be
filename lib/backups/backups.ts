import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { exportLines } from '#lib/backups/backup-export';
import {
  BACKUP_CONTENT_TYPE,
  BACKUP_LOG_TAIL,
  type Backup,
  type BackupItem,
  backupBlobKey,
  backupFilename,
  backupKeys,
  filenameOrgId,
  MAX_BACKUPS_KEPT,
  toBackup,
} from '#lib/backups/backup-keys';
import {
  abandonWrites,
  appendLogLine,
  backupTotals,
  claimWrites,
  completionWrites,
  deletionWrites,
  getBackupItem,
  latestCompleteBackup,
  listBackupItems,
  logLineWrite,
  logTail,
} from '#lib/backups/backup-records';
import { gzipped, measured } from '#lib/backups/backup-stream';
import { actorOf } from '#lib/credentials/credential-keys';
import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { AppError, ConflictError, NotFoundError, UnprocessableError } from '#lib/errors';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/**
 * Backups of the organization the request acts in (GET /backups, stats, logs, remote-status, download,
 * DELETE, POST /backups/trigger; restore: backup-restore.ts). A backup is a gzip-compressed JSON export
 * of every item the organization owns (backup-partitions.ts), written to the blob store as it is read
 * and recorded in the table with its size, SHA-256 and item count.
 *
 * Who may: organization admins and owners (and instance admins, API keys with the `admin` scope), since
 * a backup holds every record of the organization; a restore only its owner. A file name is checked
 * against the one pattern and the caller's organization before anything is read: a name that is not a
 * backup file name is 400, one of another organization's backups is 404 (as every record of another
 * tenant is), and neither touches storage.
 */

/** API Gateway and Lambda carry at most 6 MB of response; a larger backup is read from the store itself. */
export const DOWNLOAD_MAX_BYTES = 4 * 1024 * 1024;

export function ownBackupFilename(ctx: RequestContext, filename: string): string {
  const orgId = requirePrincipal(ctx).orgId;
  if (filenameOrgId(filename) !== orgId) throw new NotFoundError(`No backup named ${filename}`);
  return filename;
}

const formatBytes = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1048576
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1048576).toFixed(1)} MB`;

/**
 * Why something failed, as the organization's backup log may tell it: the message of an error meant for the
 * caller, otherwise only the trace id (an internal error's message may name the store, the account or a role;
 * the service's own log has it under that id).
 */
export function failureReason(ctx: RequestContext, error: unknown): string {
  const told = error instanceof AppError && error.expose ? error.message : `an internal error (trace ${ctx.traceId})`;
  return told.replace(/\s+/g, ' ').slice(0, 300);
}

/** POST /backups/trigger: exports the organization now and answers the complete backup record. */
export async function triggerBackup(ctx: RequestContext): Promise<Backup> {
  const principal = requireOrgRole(ctx, 'admin');
  const orgId = principal.orgId;
  const started = ctx.ports.clock.now();
  const filename = backupFilename(orgId, started);
  const claimed: BackupItem = {
    ...backupKeys.backup(orgId, filename),
    filename,
    status: 'in_progress',
    size_bytes: 0,
    sha256: null,
    item_count: 0,
    created_at: started.toISOString(),
    completed_at: null,
    created_by: actorOf(principal),
  };
  await transact(claimWrites(orgId, claimed), {
    'backups-full': () =>
      new ConflictError(`The organization keeps ${MAX_BACKUPS_KEPT} backups already; delete some before a new one`),
    'backup-exists': () => new ConflictError('A backup of this organization started at this very moment; try again'),
  });

  const key = backupBlobKey(orgId, filename);
  const progress = { items: 0 };
  const file = measured(gzipped(exportLines(orgId, claimed.created_at, progress)));
  try {
    await ctx.ports.blobs.put(key, file.stream, { contentType: BACKUP_CONTENT_TYPE });
  } catch (error) {
    await ctx.ports.blobs.delete(key).catch(() => undefined);
    await transact(abandonWrites(orgId, filename)).catch(() => undefined);
    await appendLogLine(
      orgId,
      'error',
      `${filename}: failed, nothing kept: ${failureReason(ctx, error)}`,
      ctx.ports.clock.now(),
    );
    throw error;
  }

  const { size, sha256 } = file.result();
  const finished = ctx.ports.clock.now();
  const complete: BackupItem = {
    ...claimed,
    status: 'complete',
    size_bytes: size,
    sha256,
    item_count: progress.items,
    completed_at: finished.toISOString(),
  };
  const entry = {
    ...activityActor(principal),
    action: 'backup.created',
    entity_type: 'backup',
    entity_id: filename,
    metadata: { size_bytes: size, item_count: progress.items },
  };
  const message = `${filename}: created, ${progress.items} items, ${formatBytes(size)}, sha256 ${sha256}`;
  try {
    await transact(
      [
        ...completionWrites(orgId, complete),
        ...activityWrites(orgId, entry, finished),
        logLineWrite(orgId, 'info', message, finished),
      ],
      { 'backup-gone': () => new ConflictError('The backup was deleted while it was being written') },
    );
  } catch (error) {
    await ctx.ports.blobs.delete(key).catch(() => undefined);
    throw error;
  }
  return toBackup(complete);
}

/** GET /backups: newest first. */
export async function listBackups(ctx: RequestContext, page: PageRequest): Promise<Page<Backup>> {
  const orgId = requireOrgRole(ctx, 'admin').orgId;
  const { items, total } = await listBackupItems(orgId, page);
  return { items: items.map(toBackup), total };
}

/** GET /backups/stats: how many backups are kept, their size, and the newest complete one. */
export async function backupStats(ctx: RequestContext) {
  const orgId = requireOrgRole(ctx, 'admin').orgId;
  const [totals, latest] = await Promise.all([backupTotals(orgId), latestCompleteBackup(orgId)]);
  return {
    count: totals.backups,
    total_size_bytes: totals.size_bytes,
    last_backup: latest ? toBackup(latest) : null,
  };
}

/** GET /backups/logs: the last BACKUP_LOG_TAIL lines, oldest first, as `<time> <LEVEL> <message>`. */
export async function backupLogs(ctx: RequestContext): Promise<{ lines: string[] }> {
  const orgId = requireOrgRole(ctx, 'admin').orgId;
  const lines = await logTail(orgId, BACKUP_LOG_TAIL);
  return { lines: lines.map((line) => `${line.created_at} ${line.level.toUpperCase()} ${line.message}`) };
}

/** A complete backup of the organization, or 404 / 409. */
export async function completeBackup(orgId: string, filename: string): Promise<BackupItem> {
  const item = await getBackupItem(orgId, filename);
  if (!item) throw new NotFoundError(`No backup named ${filename}`);
  if (item.status !== 'complete') throw new ConflictError('The backup is still being written');
  return item;
}

/** The bytes of a backup file, read whole (at most DOWNLOAD_MAX_BYTES). */
export async function downloadBackup(
  ctx: RequestContext,
  name: string,
): Promise<{ filename: string; sha256: string; bytes: Buffer }> {
  const filename = ownBackupFilename(ctx, name);
  const orgId = requireOrgRole(ctx, 'admin').orgId;
  const item = await completeBackup(orgId, filename);
  if (item.size_bytes > DOWNLOAD_MAX_BYTES) {
    throw new UnprocessableError(
      `The backup is ${formatBytes(item.size_bytes)}, more than a download carries ` +
        `(${formatBytes(DOWNLOAD_MAX_BYTES)}); read it from the store directly`,
    );
  }
  const stream = await ctx.ports.blobs.get(backupBlobKey(orgId, filename));
  if (!stream)
    throw new NotFoundError('The file of this backup is missing from the store (see GET /backups/remote-status)');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > DOWNLOAD_MAX_BYTES) throw new UnprocessableError('The stored file is larger than its record says');
    chunks.push(Buffer.from(chunk));
  }
  return { filename, sha256: item.sha256 ?? '', bytes: Buffer.concat(chunks) };
}

/** DELETE /backups/{filename}: the record, then the file. */
export async function deleteBackup(ctx: RequestContext, name: string): Promise<Backup> {
  const filename = ownBackupFilename(ctx, name);
  const principal = requireOrgRole(ctx, 'admin');
  const orgId = principal.orgId;
  const item = await getBackupItem(orgId, filename);
  if (!item) throw new NotFoundError(`No backup named ${filename}`);
  const now = ctx.ports.clock.now();
  const entry = { ...activityActor(principal), action: 'backup.deleted', entity_type: 'backup', entity_id: filename };
  await transact(
    [
      ...deletionWrites(orgId, item),
      ...activityWrites(orgId, entry, now),
      logLineWrite(orgId, 'info', `${filename}: deleted by ${actorOf(principal)}`, now),
    ],
    { 'backup-changed': () => new ConflictError('The backup changed meanwhile; try again') },
  );
  // The record goes first: a file left by a failure here shows in GET /backups/remote-status as not recorded.
  await ctx.ports.blobs.delete(backupBlobKey(orgId, filename));
  return toBackup(item);
}
