import * as z from 'zod';
import { ACTION_PATTERN, ACTOR_ID_PATTERN, ACTOR_TYPES, RETENTION_DAYS } from '#lib/activity/activity-keys';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';

/** The organization's activity log: who did what to which record, when; the `activity-log` function. */

const group = 'activity-log';
const tags = ['Monitoring'];

/** A posted entry's metadata, as JSON, at most this many bytes: an entry is a line of a log, not a document. */
export const MAX_METADATA_BYTES = 8 * 1024;

const actorType = z.enum(ACTOR_TYPES).meta({
  description:
    '`agent`, `system`, `user` or `api_key`. The service records a request made with an API key under ' +
    '`api_key` (the credential that acted), so the log can be filtered by it too.',
});
const actorId = z
  .string()
  .trim()
  .regex(ACTOR_ID_PATTERN, 'at most 200 characters, without `#`, spaces or control characters')
  .meta({ description: 'Such as `user:12`, `api_key:<key id>`, `agent:<name>`, `system`' });
const action = z
  .string()
  .trim()
  .regex(ACTION_PATTERN, 'at most 100 letters, digits and `_ . : -`')
  .meta({ description: 'Such as `task.created`, `credential.read`, `user.login`' });

export const ActivityRecord = z
  .object({
    id: z.string(),
    actor_type: z.enum(ACTOR_TYPES),
    actor_id: z.string(),
    action: z.string(),
    entity_type: z.string().nullable(),
    entity_id: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    recorded_by: z.string().nullable().meta({
      description: 'Who sent the entry through POST /activity-log; null for entries the service wrote itself',
    }),
    created_at: z.string(),
  })
  .meta({ id: 'ActivityEntry' });

const byActorType = z
  .object(
    Object.fromEntries(ACTOR_TYPES.map((type) => [type, z.number().int().min(0)])) as Record<
      (typeof ACTOR_TYPES)[number],
      z.ZodNumber
    >,
  )
  .meta({ id: 'ActivityCountsByActorType' });

const WindowStats = z
  .object({
    since: z.string().meta({ description: 'The start of the window’s first hour' }),
    total: z.number().int().min(0),
    by_actor_type: byActorType,
    by_action: z
      .record(z.string(), z.number().int().min(0))
      .meta({ description: 'Entries per action, the most frequent first' }),
  })
  .meta({ id: 'ActivityWindowStats' });

export const ActivityStatsRecord = z
  .object({
    generated_at: z.string(),
    last_24h: WindowStats,
    last_7d: WindowStats,
  })
  .meta({ id: 'ActivityStats' });

export const listActivity = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/activity-log',
  auth: 'bearer',
  summary: 'List the activity log, newest first',
  description:
    'Entries are written by the service in the same transaction as the change they record (tasks, ' +
    'agents, products, pipelines and their executions, templates, credential reads, logins, billing) ' +
    `and by clients through POST. They are kept for ${RETENTION_DAYS} days after the day they were ` +
    'written. Filters combine (AND). Each filter is a key of the log, not a scan of it: an actor type, ' +
    'an actor id and an action each have partitions of their own, and `total` comes from counts kept ' +
    'with the entries; only `actor_id` and `action` together read that actor’s entries to count them.',
  query: pagingQuery.extend({
    actor_type: actorType.optional(),
    actor_id: actorId.optional(),
    action: action.optional(),
  }),
  envelope: 'list',
  response: ActivityRecord,
});

export const createActivity = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/activity-log',
  auth: 'bearer',
  summary: 'Record an activity entry',
  description:
    'For actors outside the service (deployment scripts, external agents). The entry keeps who sent it ' +
    `(\`recorded_by\`). \`metadata\` is a JSON object of at most ${MAX_METADATA_BYTES} bytes; values of keys ` +
    'that name secrets (`token`, `secret`, `password`, `api_key`, `authorization`, `signature`, `email`) ' +
    'and email addresses are stored as `[REDACTED]`.',
  body: z.object({
    actor_type: actorType,
    actor_id: actorId,
    action,
    entity_type: z.string().trim().min(1).max(64).optional(),
    entity_id: z.string().trim().min(1).max(200).optional(),
    metadata: z
      .record(z.string(), z.unknown())
      .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_METADATA_BYTES, {
        message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON`,
      })
      .optional(),
  }),
  status: 201,
  response: ActivityRecord,
});

export const activityStats = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/activity-log/stats',
  auth: 'bearer',
  summary: 'Activity counts by actor type and by action, last 24 hours and last 7 days',
  description:
    'Counted by the hour (UTC) from counts kept with the entries: the 24-hour window is the current hour ' +
    'and the 23 before it, the 7-day window the current hour and the 167 before it.',
  response: ActivityStatsRecord,
});
