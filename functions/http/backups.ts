import { blobs } from '#lib/app/blobs';
import { remoteStatus } from '#lib/backups/backup-remote';
import { restoreBackup } from '#lib/backups/backup-restore';
import {
  backupLogs,
  backupStats,
  deleteBackup,
  downloadBackup,
  listBackups,
  triggerBackup,
} from '#lib/backups/backups';
import { ValidationError } from '#lib/errors';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { rawResponse } from '#lib/http/results';
import * as routes from '#lib/routes/backups';

/**
 * The file name exactly as the path carries it. API Gateway hands the path over decoded once, and the
 * router decodes each segment once more; whatever was decoded on the way, a name that is not in the path
 * as it is (one that only became valid by decoding) is refused here, before the domain reads anything.
 * The pattern the route's schema checks allows no `%`, `/`, `\`, `..` or NUL, so no decoding can make a
 * name that leaves the organization's folder.
 */
function verbatim(path: string, filename: string): string {
  if (!path.split('/').includes(filename)) {
    throw new ValidationError('The request is not valid', [
      { path: 'params.filename', message: 'must be given as it is, without percent-encoding' },
    ]);
  }
  return filename;
}

/** The backups function (the only one that reaches the blob store); tests pass their own store. */
export function backupsHandler(options: GroupOptions = {}) {
  return groupHandler(
    'backups',
    [
      route(routes.listBackups, async ({ query, ctx }) => listBackups(ctx, query)),
      route(routes.getBackupStats, async ({ ctx }) => backupStats(ctx)),
      route(routes.getBackupLogs, async ({ ctx }) => backupLogs(ctx)),
      route(routes.getBackupRemoteStatus, async ({ ctx }) => remoteStatus(ctx)),
      route(routes.triggerBackup, async ({ ctx }) => triggerBackup(ctx)),
      route(routes.downloadBackup, async ({ params, path, ctx }) => {
        const file = await downloadBackup(ctx, verbatim(path, params.filename));
        return rawResponse({
          contentType: 'application/gzip',
          body: file.bytes.toString('base64'),
          isBase64Encoded: true,
          headers: {
            'Content-Disposition': `attachment; filename="${file.filename}"`,
            'Content-Length': String(file.bytes.length),
            'X-Backup-SHA256': file.sha256,
          },
        });
      }),
      route(routes.deleteBackup, async ({ params, path, ctx }) => deleteBackup(ctx, verbatim(path, params.filename))),
      route(routes.restoreBackup, async ({ params, path, ctx }) => restoreBackup(ctx, verbatim(path, params.filename))),
    ],
    { ...options, ports: { blobs, ...options.ports } },
  );
}

export const handler = backupsHandler();
