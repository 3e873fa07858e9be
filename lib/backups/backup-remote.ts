import { createHash } from 'node:crypto';
import {
  type BackupItem,
  backupBlobFolder,
  backupBlobKey,
  filenameOrgId,
  MAX_BACKUPS_KEPT,
} from '#lib/backups/backup-keys';
import { allBackupItems } from '#lib/backups/backup-records';
import { requireOrgRole } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import type { BlobStore } from '#lib/kernel/ports';

/**
 * GET /backups/remote-status: whether the store (the "remote": the backups bucket when deployed, the
 * folder DATA_DIR/backups/<org> locally) holds what the table records. The newest complete backup's file
 * is read whole and its size and SHA-256 compared with the record's; the folder is listed and compared
 * by name with the records (complete ones missing from the store; files no record names). The listing
 * stops at twice the backups an organization may keep, and says so.
 */
const LISTING_BOUND = MAX_BACKUPS_KEPT * 2;

export interface RemoteCopy {
  size_bytes: number;
  sha256: string;
  last_modified: string;
}

export interface LatestCheck {
  filename: string;
  created_at: string;
  recorded: { size_bytes: number; sha256: string | null };
  remote: RemoteCopy | null;
  in_sync: boolean;
}

export interface RemoteStatus {
  store: BlobStore['kind'];
  checked_at: string;
  latest: LatestCheck | null;
  recorded_count: number;
  remote_count: number;
  missing_remotely: string[];
  not_recorded: string[];
  /** False when the folder held more files than were listed: the counts and lists are then partial. */
  listing_complete: boolean;
  /** The latest copy matches its record, and every complete backup's file is there (as far as the listing tells). */
  in_sync: boolean;
}

async function remoteCopy(store: BlobStore, key: string): Promise<RemoteCopy | null> {
  const head = await store.head(key);
  const stream = head ? await store.get(key) : undefined;
  if (!head || !stream) return null;
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size_bytes: size, sha256: hash.digest('hex'), last_modified: head.lastModified };
}

async function latestCheck(store: BlobStore, orgId: string, latest: BackupItem): Promise<LatestCheck> {
  const remote = await remoteCopy(store, backupBlobKey(orgId, latest.filename));
  return {
    filename: latest.filename,
    created_at: latest.created_at,
    recorded: { size_bytes: latest.size_bytes, sha256: latest.sha256 ?? null },
    remote,
    in_sync: remote !== null && remote.size_bytes === latest.size_bytes && remote.sha256 === latest.sha256,
  };
}

export async function remoteStatus(ctx: RequestContext): Promise<RemoteStatus> {
  const orgId = requireOrgRole(ctx, 'admin').orgId;
  const store = ctx.ports.blobs;
  const [records, listing] = await Promise.all([
    allBackupItems(orgId),
    store.list(backupBlobFolder(orgId), LISTING_BOUND),
  ]);
  const complete = records.filter((record) => record.status === 'complete');
  const recorded = new Set(records.map((record) => record.filename));
  const remoteNames = new Set(
    listing.items
      .map((item) => item.key.slice(backupBlobFolder(orgId).length))
      .filter((name) => filenameOrgId(name) === orgId),
  );
  const latest = complete[0] ? await latestCheck(store, orgId, complete[0]) : null;
  const missing = complete.map((record) => record.filename).filter((name) => !remoteNames.has(name));
  const notRecorded = [...remoteNames].filter((name) => !recorded.has(name)).sort();
  return {
    store: store.kind,
    checked_at: ctx.ports.clock.now().toISOString(),
    latest,
    recorded_count: complete.length,
    remote_count: remoteNames.size,
    missing_remotely: listing.complete ? missing : [],
    not_recorded: notRecorded,
    listing_complete: listing.complete,
    in_sync: (latest === null || latest.in_sync) && listing.complete && missing.length === 0,
  };
}
