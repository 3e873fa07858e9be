import { join } from 'node:path';
import { fileLogSource } from '#lib/adapters/local/file-log-source';
import { deferred } from '#lib/app/deferred';
import { config } from '#lib/config';
import type { LogSource } from '#lib/kernel/ports';

/**
 * The service's own log lines: the functions' CloudWatch log groups in aws mode (LOG_GROUP_PREFIX),
 * the files the local runtime writes under DATA_DIR/logs otherwise. Only the logs function wires it,
 * so no other bundle carries the CloudWatch Logs client, and it loads the client at its first read.
 */
export const logs = (): LogSource =>
  config.mode === 'aws'
    ? deferred(
        async () => {
          const { cloudWatchLogSource, cloudWatchLogsClient } = await import('#lib/adapters/aws/cloudwatch-log-source');
          return cloudWatchLogSource(cloudWatchLogsClient(config.region), { groupPrefix: config.logGroupPrefix });
        },
        ['read', 'files'],
        { kind: 'cloudwatch' },
      )
    : fileLogSource(join(config.dataDir, 'logs'));
