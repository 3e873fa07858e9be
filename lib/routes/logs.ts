import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { freeFormObject, pagingQuery } from '#lib/http/schemas';
import { LOG_LEVELS, LOG_RETENTION_DAYS, MAX_LOG_LINES_READ } from '#lib/logs/log-records';

/** The organization's log lines and the service's own log output: the `logs` function. */

const group = 'logs';
const tags = ['Monitoring'];

export const MAX_LOG_SEARCH_LENGTH = 200;

/**
 * Reading the service's log output costs CloudWatch calls that the whole account shares (FilterLogEvents
 * allows a few a second), so one organization may read logs this often a minute.
 */
export const LOG_READS_PER_MINUTE = 30;

export const LogEntryRecord = z
  .object({
    id: z.string().meta({ description: 'Unique within its source' }),
    source: z.enum(['db', 'file']).meta({
      description: '`db`: the organization’s log; `file`: the service’s own log output',
    }),
    level: z.enum(LOG_LEVELS),
    agent: z.string().meta({ description: 'The agent the line is about, or `system`' }),
    message: z.string(),
    meta: z.record(z.string(), z.unknown()).meta({
      description: 'The line’s other fields (for a `file` line: those the service logged, e.g. `trace_id`)',
    }),
    origin: z.string().nullable().meta({ description: 'The log file or log group of a `file` line; null for `db`' }),
    created_at: z.string(),
  })
  .meta({ id: 'LogEntry' });

export const LogFileRecord = z
  .object({
    name: z.string().meta({ description: '`service.log`, `service.log.1`, … locally; a log group name in AWS' }),
    kind: z.enum(['file', 'log_group']),
    size_bytes: z.number().int().min(0),
    last_modified: z.string().nullable().meta({ description: 'The last write, when the source can tell' }),
  })
  .meta({ id: 'LogFile' });

const FILE_SOURCE =
  'The `file` source is the service’s own JSON log output: under `npm start`, the files the local runtime ' +
  'writes in `DATA_DIR/logs` (`service.log`, rotated by size and by day into `service.log.1` … `.5`); in AWS, ' +
  'the CloudWatch log groups of the service’s functions (`/aws/lambda/<service>-<stage>-<function>`), read ' +
  'with FilterLogEvents newest first over the last 7 days. **It shows a caller only the lines that name the ' +
  'caller’s organization** in their `org_id` or `orgId` field: the lines of its requests that were refused ' +
  'or failed, of its agents’ ticks and of its pipeline stages. Lines of another organization, and ' +
  'service-wide lines that name none, are never shown. Stack traces and source locations are left out of ' +
  '`meta`.';

export const listLogs = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/logs',
  auth: 'bearer',
  summary: 'Log lines of the organization and of the service, merged newest first',
  description:
    'At most `limit` lines (default 50, at most 200) of the sources asked for, newest first. Filters combine: ' +
    '`agent` keeps the lines about that agent (exact name; service lines name the agent in their `agent` ' +
    'field, else they are `system`), `level` the lines of that level (exactly; the service’s CRITICAL lines ' +
    'are `error`, DEBUG lines `info`), `q` the lines whose message contains it, ignoring case.\n\n' +
    `The \`db\` source is the organization’s log: lines agents and the service wrote about its work, and ` +
    `lines sent with POST /logs, kept ${LOG_RETENTION_DAYS} days. ${FILE_SOURCE}\n\n` +
    'Every read is bounded: the `db` source reads at most ' +
    `${MAX_LOG_LINES_READ} of the newest lines per request, the \`file\` source at most 8 MiB of files ` +
    '(locally) or two FilterLogEvents calls per log group (AWS). `meta.sources` says how each read ended: ' +
    '`complete`, `partial` (the bound left older lines unread), `skipped` (not asked for) or `unavailable` ' +
    '(the service’s log output could not be read: with `source=all` the `db` lines are answered alone; with ' +
    '`source=file` the answer is 503). `meta.total` counts the lines answered; there is no `offset`. An ' +
    `organization may read logs ${LOG_READS_PER_MINUTE} times a minute (429 beyond), on top of its tier’s limits.`,
  query: z.object({
    limit: pagingQuery.shape.limit,
    source: z.enum(['file', 'db', 'all']).default('all').meta({ description: 'Default `all`' }),
    agent: z.string().trim().min(1).max(100).optional(),
    level: z.enum(LOG_LEVELS).optional(),
    q: z
      .string()
      .max(MAX_LOG_SEARCH_LENGTH)
      .optional()
      .transform((q) => q?.trim() || undefined)
      .meta({ description: `Part of the message, ignoring case; at most ${MAX_LOG_SEARCH_LENGTH} characters` }),
  }),
  envelope: 'list',
  response: LogEntryRecord,
  errors: [503],
  rateLimit: { name: 'logs_read', perMinute: LOG_READS_PER_MINUTE },
});

export const createLog = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/logs',
  auth: 'bearer',
  summary: 'Write a line in the organization’s log',
  description:
    `Stored in the organization’s log (the \`db\` source of GET /logs) for ${LOG_RETENTION_DAYS} days and ` +
    'answered as GET /logs shows it. `agent` names whom the line is about (any name, `system` included; it ' +
    'need not be an agent of the organization). Never put secrets in a line.',
  body: z.object({
    agent: z.string().trim().min(1).max(100),
    message: z.string().trim().min(1).max(4000),
    level: z.enum(LOG_LEVELS).default('info').meta({ description: 'Default `info`' }),
    meta: freeFormObject({ maxDepth: 8, maxBytes: 16_384 }).optional(),
  }),
  response: LogEntryRecord,
  status: 201,
});

export const listLogFiles = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/logs/files',
  auth: 'bearer',
  summary: 'The service’s log files (or log groups), with sizes and last writes',
  description:
    'Locally, the files under `DATA_DIR/logs`, the current one first; in AWS, the CloudWatch log groups of ' +
    'the service’s functions, with the bytes CloudWatch stores (updated by CloudWatch within hours) and the ' +
    'time of each group’s last event. The files hold every organization’s lines: GET /logs with ' +
    '`source=file` shows a caller its own organization’s lines from them, never their whole content.',
  envelope: 'list',
  response: LogFileRecord,
});
