import { randomBase62 } from '#lib/crypto/secrets';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { DAY_SECONDS, epochSeconds } from '#lib/identity/ttl';

/**
 * The organization's log lines (the `db` source of GET /logs): what agents and the service said about
 * their work. Lines never carry secret values. They grow with every run, so they live in a partition
 * of their own, never beside the records request paths query (design: records that grow with use), and
 * expire after LOG_RETENTION_DAYS through the table's TTL.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | line | `T#<org>#LOGS` | `LOG#<ISO time>#<random>` | `expires_at`: TTL, LOG_RETENTION_DAYS after writing |
 *
 * Sort keys start with the time, so the partition read backwards is newest first.
 */
export const logKeys = {
  partition: (orgId: string): string => `${tenantPk(orgId)}#LOGS`,
  line: (orgId: string, at: string, nonce: string) => ({ pk: logKeys.partition(orgId), sk: `LOG#${at}#${nonce}` }),
  prefix: 'LOG#',
};

/** How long a line is kept: DynamoDB removes it (within a few days) after this. */
export const LOG_RETENTION_DAYS = 30;

export const LOG_LEVELS = ['error', 'warn', 'info'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogLine {
  /** The agent the line is about, or `system`. */
  agent: string;
  level: LogLevel;
  message: string;
  meta?: Record<string, unknown>;
}

/** A line as stored, without its keys. */
export interface StoredLogLine extends Required<LogLine> {
  /** `<ISO time>#<random>`: unique, and ordered as the lines were written. */
  id: string;
  created_at: string;
}

function logItem(orgId: string, line: LogLine, now: Date, extra: Record<string, unknown> = {}) {
  const at = now.toISOString();
  const nonce = randomBase62(8);
  return {
    ...logKeys.line(orgId, at, nonce),
    id: `${at}#${nonce}`,
    ...line,
    meta: line.meta ?? {},
    created_at: at,
    expires_at: epochSeconds(now) + LOG_RETENTION_DAYS * DAY_SECONDS,
    ...extra,
  };
}

/** The line as a write for the transaction that makes the change it tells of. */
export function logWrite(orgId: string, line: LogLine, now: Date): TransactItem {
  return { Put: { Item: logItem(orgId, line, now) } };
}

/** Writes one line on its own; `createdBy` names who sent it (POST /logs), kept but not shown. */
export async function writeLog(orgId: string, line: LogLine, now: Date, createdBy?: string): Promise<StoredLogLine> {
  const item = logItem(orgId, line, now, createdBy ? { created_by: createdBy } : {});
  await table.put({ Item: item });
  return toStoredLine(item);
}

export const toStoredLine = (item: Record<string, unknown>): StoredLogLine => ({
  id: String(item.id),
  agent: String(item.agent),
  level: item.level as LogLevel,
  message: String(item.message),
  meta: (item.meta as Record<string, unknown> | undefined) ?? {},
  created_at: String(item.created_at),
});

export interface LogLineFilter {
  /** Exact agent name. */
  agent?: string | undefined;
  level?: LogLevel | undefined;
  /** Part of the message, ignoring case. */
  q?: string | undefined;
}

/** Lines are read this many at a time, newest first… */
const READ_PAGE = 200;
/** …and at most this many per request, however few of them pass the filter. */
export const MAX_LOG_LINES_READ = 2_000;

/**
 * The organization's newest lines that pass the filter, at most `limit`: Queries of the log partition
 * backwards, `READ_PAGE` lines each, `agent` and `level` applied by DynamoDB and `q` here (DynamoDB's
 * `contains` cannot ignore case). Reads stop after MAX_LOG_LINES_READ lines: `complete` is false when
 * older lines were left unread. Lines past their expiry that DynamoDB has not yet removed are skipped.
 *
 * @example
 * const { lines } = await readLogLines('org_1', { level: 'error', q: 'timeout' }, 50, new Date());
 */
export async function readLogLines(
  orgId: string,
  filter: LogLineFilter,
  limit: number,
  now: Date,
): Promise<{ lines: StoredLogLine[]; complete: boolean }> {
  const conditions = ['(attribute_not_exists(expires_at) OR expires_at > :now)'];
  const values: Record<string, unknown> = {
    ':pk': logKeys.partition(orgId),
    ':prefix': logKeys.prefix,
    ':now': epochSeconds(now),
  };
  const names: Record<string, string> = {};
  if (filter.agent !== undefined) {
    conditions.push('#agent = :agent');
    names['#agent'] = 'agent';
    values[':agent'] = filter.agent;
  }
  if (filter.level !== undefined) {
    conditions.push('#level = :level');
    names['#level'] = 'level';
    values[':level'] = filter.level;
  }
  const q = filter.q?.toLowerCase();
  const lines: StoredLogLine[] = [];
  let read = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: conditions.join(' AND '),
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: Math.min(READ_PAGE, MAX_LOG_LINES_READ - read),
      ExclusiveStartKey: startKey,
    });
    read += result.ScannedCount ?? 0;
    for (const item of result.Items ?? []) {
      const line = toStoredLine(item);
      if (q === undefined || line.message.toLowerCase().includes(q)) lines.push(line);
      if (lines.length >= limit) return { lines, complete: true };
    }
    startKey = result.LastEvaluatedKey;
  } while (startKey && read < MAX_LOG_LINES_READ);
  return { lines, complete: startKey === undefined };
}
