import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  encodeItem,
  footerLine,
  headerLine,
  itemLine,
} from '#lib/backups/backup-format';
import { Followers, partitionPages, pointerItems, sidePartitions } from '#lib/backups/backup-partitions';
import { tenantPk } from '#lib/db/keys';
import { UnprocessableError } from '#lib/errors';

/**
 * An organization's export as the lines of its backup file (lib/backups/backup-format.ts), produced as
 * the table is read: `T#<org>` first (its records name the queue partitions and the lookups to read
 * after it), then its other partitions, then the lookups (lib/backups/backup-partitions.ts). Each Query
 * page becomes one string of lines, so memory holds a page, not the export.
 *
 * An export stops at MAX_EXPORT_ITEMS: the trigger answers within API Gateway's 30 seconds, and reading,
 * compressing and storing this many items (about 200 MB of JSON at 1 KB an item) fits in that time with
 * room to spare. A larger organization's trigger answers 422 and nothing is stored.
 */
export const MAX_EXPORT_ITEMS = 200_000;

export interface ExportProgress {
  items: number;
}

export async function* exportLines(
  orgId: string,
  createdAt: string,
  progress: ExportProgress,
  maxItems: number = MAX_EXPORT_ITEMS,
): AsyncGenerator<string> {
  yield headerLine({ format: BACKUP_FORMAT, version: BACKUP_FORMAT_VERSION, org_id: orgId, created_at: createdAt });
  const lines = (items: Array<Record<string, unknown>>): string => {
    if (progress.items + items.length > maxItems) {
      throw new UnprocessableError(
        `The organization holds more than ${maxItems} items, more than one backup may hold; nothing was stored`,
      );
    }
    const text = items.map((item, at) => itemLine(encodeItem(item), progress.items + at === 0)).join('');
    progress.items += items.length;
    return text;
  };

  const followers = new Followers();
  for await (const page of partitionPages(tenantPk(orgId))) {
    for (const item of page) followers.note(item);
    if (page.length > 0) yield lines(page);
  }
  for (const pk of [...sidePartitions(orgId), ...followers.partitions(orgId)]) {
    for await (const page of partitionPages(pk)) if (page.length > 0) yield lines(page);
  }
  const pointers = await pointerItems(orgId, [...followers.pointers.values()]);
  if (pointers.length > 0) yield lines(pointers);
  yield footerLine(progress.items);
}
