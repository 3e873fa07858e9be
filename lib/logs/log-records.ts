import { randomBase62 } from '#lib/crypto/secrets';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';

/**
 * The organization's log lines (the `db` source of GET /logs): what agents and the service said about
 * their work, newest last. Lines never carry secret values.
 *
 * | record | pk | sk |
 * |---|---|---|
 * | line | `T#<org>` | `LOG#<ISO time>#<random>` |
 */
export const logKeys = {
  line: (orgId: string, at: string, nonce: string) => ({ pk: tenantPk(orgId), sk: `LOG#${at}#${nonce}` }),
  prefix: 'LOG#',
};

export type LogLevel = 'error' | 'warn' | 'info';

export interface LogLine {
  /** The agent the line is about, or `system`. */
  agent: string;
  level: LogLevel;
  message: string;
  meta?: Record<string, unknown>;
}

function logItem(orgId: string, line: LogLine, now: Date) {
  const at = now.toISOString();
  const nonce = randomBase62(8);
  return { ...logKeys.line(orgId, at, nonce), id: `${at}#${nonce}`, ...line, meta: line.meta ?? {}, created_at: at };
}

/** The line as a write for the transaction that makes the change it tells of. */
export function logWrite(orgId: string, line: LogLine, now: Date): TransactItem {
  return { Put: { Item: logItem(orgId, line, now) } };
}

export async function writeLog(orgId: string, line: LogLine, now: Date): Promise<void> {
  await table.put({ Item: logItem(orgId, line, now) });
}
