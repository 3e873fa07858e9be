import { join } from 'node:path';
import { cloudWatchLogSource, cloudWatchLogsClient } from '#lib/adapters/aws/cloudwatch-log-source';
import { fileLogSource } from '#lib/adapters/local/file-log-source';
import { config } from '#lib/config';
import type { LogSource } from '#lib/kernel/ports';

/**
 * The service's own log lines: the functions' CloudWatch log groups in aws mode (LOG_GROUP_PREFIX),
 * the files the local runtime writes under DATA_DIR/logs otherwise. Only the logs function wires it,
 * so no other bundle carries the CloudWatch Logs client.
 */
export const logs = (): LogSource =>
  config.mode === 'aws'
    ? cloudWatchLogSource(cloudWatchLogsClient(config.region), { groupPrefix: config.logGroupPrefix })
    : fileLogSource(join(config.dataDir, 'logs'));
