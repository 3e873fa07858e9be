import { activityActor } from '#lib/activity/activity-log';
import { ServiceUnavailableError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import type { ServiceLogEntry, ServiceLogFile } from '#lib/kernel/ports';
import { belongsTo, LOG_ORG_FIELDS } from '#lib/kernel/service-log';
import { logger } from '#lib/logger';
import { type LogLevel, type LogLine, readLogLines, type StoredLogLine, writeLog } from '#lib/logs/log-records';

/**
 * GET /logs, POST /logs and GET /logs/files: the organization's log lines (`db`, lib/logs/log-records)
 * and the lines of the service's own log output that name the organization (`file`, the LogSource port:
 * DATA_DIR/logs locally, the functions' CloudWatch log groups in AWS), merged newest first.
 */

export type LogSourceName = 'db' | 'file';

/** A line as GET /logs shows it, whichever source it came from. */
export interface LogEntry {
  id: string;
  source: LogSourceName;
  level: LogLevel;
  /** The agent the line is about, or `system`. */
  agent: string;
  message: string;
  meta: Record<string, unknown>;
  /** The log file or log group of a `file` line; null for a `db` line. */
  origin: string | null;
  created_at: string;
}

export interface LogQuery {
  limit: number;
  source: LogSourceName | 'all';
  agent?: string | undefined;
  level?: LogLevel | undefined;
  q?: string | undefined;
}

/** How each source's read ended: all it had, cut at its bound, not asked, or failed (file only). */
export type SourceOutcome = 'complete' | 'partial' | 'skipped' | 'unavailable';

const fromDb = (line: StoredLogLine): LogEntry => ({ ...line, source: 'db', origin: null });

/** POST /logs: one line in the organization's log, answered as stored. */
export async function postLog(ctx: RequestContext, line: LogLine): Promise<LogEntry> {
  const principal = requirePrincipal(ctx);
  const stored = await writeLog(principal.orgId, line, ctx.ports.clock.now(), activityActor(principal).actor_id);
  return fromDb(stored);
}

/** GET /logs: at most `limit` lines of the sources asked for, newest first, and how each read ended. */
export async function listLogs(
  ctx: RequestContext,
  query: LogQuery,
): Promise<{ items: LogEntry[]; sources: Record<LogSourceName, SourceOutcome> }> {
  const { orgId } = requirePrincipal(ctx);
  const filter = { agent: query.agent, level: query.level, q: query.q };
  const [db, file] = await Promise.all([
    query.source === 'file' ? undefined : readLogLines(orgId, filter, query.limit, ctx.ports.clock.now()),
    query.source === 'db' ? undefined : readServiceLines(ctx, orgId, query),
  ]);
  if (query.source === 'file' && file?.outcome === 'unavailable') {
    throw new ServiceUnavailableError('The service’s log output cannot be read just now; try again');
  }
  const items = [...(db?.lines.map(fromDb) ?? []), ...(file?.items ?? [])]
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
    .slice(0, query.limit);
  return {
    items,
    sources: {
      db: db ? (db.complete ? 'complete' : 'partial') : 'skipped',
      file: file?.outcome ?? 'skipped',
    },
  };
}

/** GET /logs/files: the log files (or log groups) the service writes, with their sizes and last writes. */
export async function listLogFiles(ctx: RequestContext): Promise<ServiceLogFile[]> {
  requirePrincipal(ctx);
  return ctx.ports.logs.files();
}

async function readServiceLines(
  ctx: RequestContext,
  orgId: string,
  query: LogQuery,
): Promise<{ items: LogEntry[]; outcome: SourceOutcome }> {
  const q = query.q?.toLowerCase();
  const keep = (record: Record<string, unknown>) =>
    (query.level === undefined || levelOf(record) === query.level) &&
    (query.agent === undefined || agentOf(record) === query.agent) &&
    (q === undefined ||
      String(record.message ?? '')
        .toLowerCase()
        .includes(q));
  try {
    const read = await ctx.ports.logs.read({ orgId, keep, limit: query.limit });
    // Every source keeps to the tenancy rule; checking each line again here costs nothing.
    const items = read.entries.filter((entry) => belongsTo(entry.record, orgId)).map(fromService);
    return { items, outcome: read.complete ? 'complete' : 'partial' };
  } catch (error) {
    logger.warn('reading the service log failed', { org_id: orgId, error: error as Error });
    return { items: [], outcome: 'unavailable' };
  }
}

/** Powertools' level names in the three the API speaks: CRITICAL is an error, DEBUG and TRACE are info. */
function levelOf(record: Record<string, unknown>): LogLevel {
  const level = String(record.level ?? '').toUpperCase();
  if (level === 'ERROR' || level === 'CRITICAL' || level === 'FATAL') return 'error';
  return level === 'WARN' || level === 'WARNING' ? 'warn' : 'info';
}

/** The agent a service line is about: its `agent` field (pipeline stages name theirs), else `system`. */
const agentOf = (record: Record<string, unknown>): string =>
  typeof record.agent === 'string' && record.agent !== '' ? record.agent : 'system';

/** Fields every line has, shown as the entry's own fields or implied by who asks. */
const SHOWN_APART = new Set(['level', 'message', 'timestamp', 'agent', 'service', 'sampling_rate', ...LOG_ORG_FIELDS]);

function fromService(entry: ServiceLogEntry): LogEntry {
  const meta = Object.fromEntries(Object.entries(entry.record).filter(([key]) => !SHOWN_APART.has(key)));
  return {
    id: entry.id,
    source: 'file',
    level: levelOf(entry.record),
    agent: agentOf(entry.record),
    message: String(entry.record.message ?? ''),
    meta: withoutInternals(meta) as Record<string, unknown>,
    origin: entry.origin,
    created_at: new Date(entry.time).toISOString(),
  };
}

/**
 * A logged error keeps its name and message for the caller; its stack and source location are the
 * service's internals and stay in the log.
 */
function withoutInternals(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => withoutInternals(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'stack' && key !== 'location')
      .map(([key, inner]) => [key, withoutInternals(inner, depth + 1)]),
  );
}
