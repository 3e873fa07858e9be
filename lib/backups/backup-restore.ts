import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { BackupFormatError, exportEntries, type TableItem } from '#lib/backups/backup-format';
import { type BackupItem, backupBlobKey, backupKeys } from '#lib/backups/backup-keys';
import { recordsPresent, restoreWriteOf } from '#lib/backups/backup-partitions';
import {
  appendLogLine,
  getRestoreMark,
  logLineWrite,
  restoreClearWrite,
  restoreMarkWrite,
} from '#lib/backups/backup-records';
import { gunzippedLines, measured } from '#lib/backups/backup-stream';
import { completeBackup, failureReason, ownBackupFilename } from '#lib/backups/backups';
import { actorOf } from '#lib/credentials/credential-keys';
import { writeMany } from '#lib/db/batch';
import { counterWrite } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, NotFoundError, UnprocessableError } from '#lib/errors';
import { requireOrgRole } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import type { BlobStore } from '#lib/kernel/ports';
import { indexTasksWithoutTerms } from '#lib/tasks/search-migration';
import { taskKeys } from '#lib/tasks/task-keys';

/**
 * POST /backups/{filename}/restore: disaster recovery of an organization from one of its own backups,
 * into the same organization (same id), after its data was lost. Same id, because every item carries
 * it (keys, index keys, the additional data credentials are sealed with, schedule names): written back
 * unchanged, the items are exactly those the backup read, and sealed credentials open as before.
 *
 * - Owner only: a restore writes every record of the organization.
 * - Into an empty organization only (409 otherwise): `T#<org>` holds nothing but the organization's
 *   identity (its record and memberships, which the caller needs to be here at all, and which stay as
 *   they are) and API key uses, and `T#<org>#METRICS` nothing at all. Entries that append-only partitions
 *   received since the loss (the activity log, log lines) are kept: the backup's are written beside
 *   them and its activity counts added to theirs (backup-partitions.ts says where each item goes).
 * - The file is read twice: first to check it whole (its size and SHA-256 are the recorded ones, it is
 *   well formed, every item is this organization's), before anything is written; then to write.
 * - A restore under way is marked (`T#<org>#BACKUPS` / `RESTORE`): one that stopped midway (a timeout,
 *   a crash) is resumed by asking again for the same file, since writing an item twice changes nothing
 *   but the counts, and no other backup is restored meanwhile.
 * - Task search postings are not in backups: the restore writes the tasks unindexed and then indexes
 *   them (lib/tasks/search-migration.ts), as part of the restore (a resumed restore indexes again).
 * - Nothing else should write to the organization while it runs: an id handed out meanwhile may be
 *   overwritten by the backup's record of the same id. Agent schedules are not touched: an agent's
 *   schedule is made again by stopping and starting it.
 */

/** Bounds of reading a file back: a backup holds at most MAX_EXPORT_ITEMS items of at most 400 KB. */
const LINE_LIMITS = { maxBytes: 1024 ** 3, maxLineBytes: 2 * 1024 * 1024 };
/** Items written per BatchWriteItem round (lib/db/batch writes 25 a call, 4 calls side by side). */
const WRITE_BATCH = 100;

export interface RestoreResult {
  filename: string;
  restored_items: number;
  /** Identity records of the file left as the organization holds them now. */
  kept_identity_records: number;
  /** Lookups (API key hashes, invite tokens, payment customers) that another organization holds now. */
  skipped_lookups: number;
  restored_at: string;
}

type Item = TableItem & { pk: string; sk: string };

async function openFile(store: BlobStore, key: string): Promise<AsyncIterable<Uint8Array>> {
  const stream = await store.get(key);
  if (!stream)
    throw new NotFoundError('The file of this backup is missing from the store (see GET /backups/remote-status)');
  return stream;
}

function unrestorable(error: unknown): never {
  if (error instanceof BackupFormatError) {
    throw new UnprocessableError(`The backup file cannot be restored: ${error.message}`);
  }
  throw error;
}

/** The first reading: throws 422 unless the file is the recorded one, well formed and wholly the organization's. */
async function verify(store: BlobStore, orgId: string, backup: BackupItem): Promise<void> {
  const file = measured(await openFile(store, backupBlobKey(orgId, backup.filename)));
  let count = -1;
  try {
    for await (const entry of exportEntries(gunzippedLines(file.stream, LINE_LIMITS))) {
      if (entry.kind === 'header' && entry.header.org_id !== orgId) {
        throw new BackupFormatError('The file is a backup of another organization');
      }
      if (entry.kind === 'item' && restoreWriteOf(orgId, entry.item) === undefined) {
        throw new BackupFormatError('An item of the file is not this organization’s');
      }
      if (entry.kind === 'end') count = entry.count;
    }
  } catch (error) {
    unrestorable(error);
  }
  const { size, sha256 } = file.result();
  if (size !== backup.size_bytes || sha256 !== backup.sha256 || count !== backup.item_count) {
    throw new UnprocessableError('The stored file is not the one recorded (size, SHA-256 or item count differ)');
  }
}

/** Activity counts: the backup's numbers added to those counted since, the rest set as they were. */
async function addCounts(item: Item): Promise<void> {
  const add: Record<string, number> = {};
  const set: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) {
    if (name === 'pk' || name === 'sk') continue;
    if (typeof value === 'number' && name !== 'expires_at') add[name] = value;
    else set[name] = value;
  }
  const write = counterWrite({ key: { pk: item.pk, sk: item.sk }, add, set }) as { Update: Record<string, unknown> };
  await table.update(write.Update as Parameters<typeof table.update>[0]);
}

/** A lookup item, unless another organization holds its key now. */
async function putLookup(orgId: string, item: Item): Promise<boolean> {
  try {
    await table.put({
      Item: item,
      ConditionExpression: 'attribute_not_exists(pk) OR org_id = :org',
      ExpressionAttributeValues: { ':org': orgId },
      reason: 'lookup-taken',
    });
    return true;
  } catch (error) {
    if (isConditionFailed(error, 'lookup-taken')) return false;
    throw error;
  }
}

/** A task as the restore writes it: without the mark of search postings it has not got (yet). */
function unindexed(orgId: string, item: Item): Item {
  if (item.pk !== tenantPk(orgId) || !item.sk.startsWith(taskKeys.prefix)) return item;
  const { terms_indexed: _, ...task } = item;
  return task;
}

/** The second reading: writes every item where backup-partitions.ts says it goes. */
async function writeItems(store: BlobStore, orgId: string, filename: string) {
  const counts = { restored: 0, kept: 0, skipped: 0 };
  const puts: Item[] = [];
  const flush = async () => {
    if (puts.length > 0) await writeMany({ puts: puts.splice(0) });
  };
  const file = await openFile(store, backupBlobKey(orgId, filename));
  try {
    for await (const entry of exportEntries(gunzippedLines(file, LINE_LIMITS))) {
      if (entry.kind !== 'item') continue;
      const { item } = entry;
      switch (restoreWriteOf(orgId, item)) {
        case 'keep-identity':
          counts.kept += 1;
          break;
        case 'derived':
          break;
        case 'put':
          puts.push(unindexed(orgId, item));
          counts.restored += 1;
          if (puts.length >= WRITE_BATCH) await flush();
          break;
        case 'add-counts':
          await addCounts(item);
          counts.restored += 1;
          break;
        case 'pointer':
          if (await putLookup(orgId, item)) counts.restored += 1;
          else counts.skipped += 1;
          break;
        default:
          throw new BackupFormatError('An item of the file is not this organization’s');
      }
    }
    await flush();
  } catch (error) {
    unrestorable(error);
  }
  return counts;
}

export async function restoreBackup(ctx: RequestContext, name: string): Promise<RestoreResult> {
  const filename = ownBackupFilename(ctx, name);
  const principal = requireOrgRole(ctx, 'owner');
  const orgId = principal.orgId;
  const backup = await completeBackup(orgId, filename);
  await verify(ctx.ports.blobs, orgId, backup);

  const mark = await getRestoreMark(orgId);
  if (mark && mark.filename !== filename) {
    throw new ConflictError(`A restore of ${mark.filename} is under way; ask for it again to finish it first`);
  }
  const by = actorOf(principal);
  if (!mark) {
    const present = await recordsPresent(orgId);
    if (present.length > 0) {
      throw new ConflictError(
        'The organization is not empty: a backup is restored only into an organization that holds nothing ' +
          'but its own record and its members',
        present.map((kind) => ({ kind, message: `The organization holds ${kind} records` })),
      );
    }
    const started = ctx.ports.clock.now().toISOString();
    await transact(
      [restoreMarkWrite({ ...backupKeys.restore(orgId), filename, started_at: started, started_by: by })],
      {
        'restore-running': () => new ConflictError('A restore is under way; try again later'),
      },
    );
  }
  await appendLogLine(
    orgId,
    'info',
    `${filename}: restore ${mark ? 'resumed' : 'started'} by ${by}`,
    ctx.ports.clock.now(),
  );

  let counts: Awaited<ReturnType<typeof writeItems>>;
  try {
    counts = await writeItems(ctx.ports.blobs, orgId, filename);
    await indexTasksWithoutTerms(orgId);
  } catch (error) {
    const reason = failureReason(ctx, error);
    await appendLogLine(
      orgId,
      'error',
      `${filename}: restore stopped (${reason}); ask again to resume it`,
      ctx.ports.clock.now(),
    );
    throw error;
  }

  const now = ctx.ports.clock.now();
  const entry = {
    ...activityActor(principal),
    action: 'backup.restored',
    entity_type: 'backup',
    entity_id: filename,
    metadata: { restored_items: counts.restored, skipped_lookups: counts.skipped },
  };
  const message =
    `${filename}: restored ${counts.restored} items (identity records kept as they are: ${counts.kept}` +
    `${counts.skipped > 0 ? `; lookups held by another organization, skipped: ${counts.skipped}` : ''})`;
  await transact([
    restoreClearWrite(orgId, filename),
    ...activityWrites(orgId, entry, now),
    logLineWrite(orgId, 'info', message, now),
  ]);
  return {
    filename,
    restored_items: counts.restored,
    kept_identity_records: counts.kept,
    skipped_lookups: counts.skipped,
    restored_at: now.toISOString(),
  };
}
