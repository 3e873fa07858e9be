import {
  BACKUP_LOG_RETENTION_DAYS,
  type BackupItem,
  type BackupLogItem,
  backupKeys,
  MAX_BACKUPS_KEPT,
  type RestoreMarkItem,
} from '#lib/backups/backup-keys';
import { randomBase62 } from '#lib/crypto/secrets';
import { itemExists, itemIsNew } from '#lib/db/conditions';
import { prefixEnd } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage, queryUpTo } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { DAY_SECONDS, epochSeconds } from '#lib/identity/ttl';

/**
 * Access patterns and writes of backup records (keys: lib/backups/backup-keys.ts). A backup's life in
 * writes: `claimWrites` records it `in_progress` and counts it, refused with `backups-full` when the
 * organization keeps MAX_BACKUPS_KEPT already and `backup-exists` when its name is taken; then either
 * `completionWrites` (its size, digest and item count; `backup-gone` when it was deleted meanwhile) or
 * `abandonWrites` when its file could not be written; `deletionWrites` remove it (`backup-changed`
 * when it completed meanwhile, so that its size is never counted twice or not at all).
 */
const byStatus = '#status = :status';

const statsChange = (orgId: string, backups: number, sizeBytes: number): TransactItem => ({
  Update: {
    Key: backupKeys.stats(orgId),
    UpdateExpression: 'ADD backups :backups, size_bytes :size',
    ExpressionAttributeValues: { ':backups': backups, ':size': sizeBytes },
  },
});

export function claimWrites(orgId: string, item: BackupItem): TransactItem[] {
  return [
    { Put: { Item: item, ConditionExpression: itemIsNew }, reason: 'backup-exists' },
    {
      Update: {
        Key: backupKeys.stats(orgId),
        UpdateExpression: 'ADD backups :one',
        ConditionExpression: 'attribute_not_exists(backups) OR backups < :max',
        ExpressionAttributeValues: { ':one': 1, ':max': MAX_BACKUPS_KEPT },
      },
      reason: 'backups-full',
    },
  ];
}

export function completionWrites(orgId: string, item: BackupItem): TransactItem[] {
  return [
    {
      Update: {
        Key: backupKeys.backup(orgId, item.filename),
        UpdateExpression:
          'SET #status = :complete, size_bytes = :size, sha256 = :sha256, item_count = :count, completed_at = :at',
        ConditionExpression: byStatus,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': 'in_progress',
          ':complete': 'complete',
          ':size': item.size_bytes,
          ':sha256': item.sha256,
          ':count': item.item_count,
          ':at': item.completed_at,
        },
      },
      reason: 'backup-gone',
    },
    statsChange(orgId, 0, item.size_bytes),
  ];
}

export const abandonWrites = (orgId: string, filename: string): TransactItem[] => [
  { Delete: { Key: backupKeys.backup(orgId, filename), ConditionExpression: itemExists } },
  statsChange(orgId, -1, 0),
];

export const deletionWrites = (orgId: string, item: BackupItem): TransactItem[] => [
  {
    Delete: {
      Key: backupKeys.backup(orgId, item.filename),
      ConditionExpression: byStatus,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': item.status },
    },
    reason: 'backup-changed',
  },
  statsChange(orgId, -1, item.status === 'complete' ? -item.size_bytes : 0),
];

/** A line of the organization's backup log, as a write for the transaction of what it tells. */
export function logLineWrite(orgId: string, level: BackupLogItem['level'], message: string, now: Date): TransactItem {
  const at = now.toISOString();
  const item: BackupLogItem = {
    ...backupKeys.logLine(orgId, at, randomBase62(8)),
    level,
    message,
    created_at: at,
    expires_at: epochSeconds(now) + BACKUP_LOG_RETENTION_DAYS * DAY_SECONDS,
  };
  return { Put: { Item: item } };
}

/** Appends a line on its own (what failed has no transaction to join). */
export async function appendLogLine(orgId: string, level: BackupLogItem['level'], message: string, now: Date) {
  const write = logLineWrite(orgId, level, message, now) as { Put: { Item: BackupLogItem } };
  await table.put({ Item: write.Put.Item });
}

export async function getBackupItem(orgId: string, filename: string): Promise<BackupItem | undefined> {
  const { Item } = await table.get({ Key: backupKeys.backup(orgId, filename), ConsistentRead: true });
  return Item as BackupItem | undefined;
}

const backupRange = (orgId: string) => ({
  KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
  ExpressionAttributeValues: {
    ':pk': backupKeys.partition(orgId),
    ':prefix': backupKeys.backupPrefix,
    ':end': prefixEnd(backupKeys.backupPrefix),
  },
});

/** A page of the organization's backups, newest first (there are at most MAX_BACKUPS_KEPT, so `total` is exact). */
export const listBackupItems = (orgId: string, page: PageRequest): Promise<Page<BackupItem>> =>
  queryPage<BackupItem>({ ...backupRange(orgId), ScanIndexForward: false, ConsistentRead: true }, page);

/** Every backup of the organization, newest first (a few more than MAX_BACKUPS_KEPT at most). */
export async function allBackupItems(orgId: string): Promise<BackupItem[]> {
  const { items } = await queryUpTo<BackupItem>(
    { ...backupRange(orgId), ScanIndexForward: false, ConsistentRead: true },
    MAX_BACKUPS_KEPT * 2,
  );
  return items;
}

/** The newest complete backup: the first complete one, newest first. */
export async function latestCompleteBackup(orgId: string): Promise<BackupItem | undefined> {
  return (await allBackupItems(orgId)).find((item) => item.status === 'complete');
}

export async function backupTotals(orgId: string): Promise<{ backups: number; size_bytes: number }> {
  const { Item } = await table.get({ Key: backupKeys.stats(orgId), ConsistentRead: true });
  return { backups: Number(Item?.backups ?? 0), size_bytes: Number(Item?.size_bytes ?? 0) };
}

/** The last `count` lines of the backup log, oldest first. */
export async function logTail(orgId: string, count: number): Promise<BackupLogItem[]> {
  const { Items = [] } = await table.query({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
    ExpressionAttributeValues: {
      ':pk': backupKeys.partition(orgId),
      ':prefix': backupKeys.logPrefix,
      ':end': prefixEnd(backupKeys.logPrefix),
    },
    ScanIndexForward: false,
    ConsistentRead: true,
    Limit: count,
  });
  return (Items as BackupLogItem[]).reverse();
}

export async function getRestoreMark(orgId: string): Promise<RestoreMarkItem | undefined> {
  const { Item } = await table.get({ Key: backupKeys.restore(orgId), ConsistentRead: true });
  return Item as RestoreMarkItem | undefined;
}

/** Marks a restore under way; refused with `restore-running` when one is marked already. */
export const restoreMarkWrite = (item: RestoreMarkItem): TransactItem => ({
  Put: { Item: item, ConditionExpression: itemIsNew },
  reason: 'restore-running',
});

export const restoreClearWrite = (orgId: string, filename: string): TransactItem => ({
  Delete: {
    Key: backupKeys.restore(orgId),
    ConditionExpression: 'filename = :filename',
    ExpressionAttributeValues: { ':filename': filename },
  },
  reason: 'restore-changed',
});
