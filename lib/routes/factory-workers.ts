import * as z from 'zod';
import { BACKLOG_ALERT_SECONDS, DEAD_WINDOW_HOURS, MAX_CONCURRENT, WORKER_COUNT } from '#lib/factory/factory-keys';
import { defineRoute } from '#lib/http/route';
import { JOB_STATUSES } from '#lib/jobs/job-keys';

/**
 * The factory workers (`/factory-workers`): the pools that run the job queue's jobs for the organization,
 * their setting, numbers and health; served by the `factory-workers` function.
 */

const group = 'factory-workers';
const tags = ['Factory workers'];

const count = z.number().int().min(0);

const Config = z
  .object({
    worker_count: z.number().int(),
    max_concurrent: z.number().int(),
    updated_at: z.string().nullable().meta({ description: 'null while the defaults apply' }),
  })
  .meta({ id: 'FactoryConfig' });

const HeldJob = z.object({
  id: z.string(),
  queue_name: z.string(),
  task_type: z.string(),
  attempts: z.number().int(),
  started_at: z.string().nullable(),
  lease_expires_at: z.string().nullable(),
});

const POOLS =
  'The instance runs a pool for each organization whose job queue has work to claim; a pool with nothing to do ' +
  'for a minute stops, and starts again when work comes.';

export const listFactoryWorkers = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/factory-workers',
  auth: 'bearer',
  summary: 'The factory workers and the jobs they hold',
  description:
    `${POOLS} \`workers\` are those of the organization’s running pools with the jobs each holds now; ` +
    '`unattended_jobs` are running jobs whose worker is in no running pool (their lease will run out and the ' +
    'job be claimed again).',
  response: z.object({
    running: z.boolean(),
    config: Config,
    pools: z.array(
      z.object({
        runtime_id: z.string(),
        worker_count: z.number().int(),
        max_concurrent: z.number().int(),
        started_at: z.string(),
        heartbeat_at: z.string(),
      }),
    ),
    workers: z.array(
      z.object({
        id: z.string(),
        runtime_id: z.string(),
        state: z.enum(['busy', 'idle']),
        jobs: z.array(HeldJob),
        completed: count.meta({ description: 'Jobs it completed since its pool started' }),
        failed: count,
      }),
    ),
    unattended_jobs: z.array(HeldJob),
  }),
});

export const factoryWorkerStats = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/factory-workers/stats',
  auth: 'bearer',
  summary: 'Factory worker stats',
  description:
    'Workers busy and idle, the job queue’s jobs by status (completed and dead: those kept), the longest wait, ' +
    'all-time totals, the mean run time, and what the running pools did since they started.',
  response: z.object({
    running: z.boolean(),
    config: Config,
    pools: count,
    workers: count,
    busy_workers: count,
    idle_workers: count,
    jobs: z.object(Object.fromEntries(JOB_STATUSES.map((status) => [status, count]))),
    oldest_waiting_seconds: count.nullable(),
    totals: z.object({ submitted: count, completed: count, dead: count, failed_attempts: count }),
    average_run_ms: count.nullable(),
    since_pool_start: z.object({ completed: count, failed: count }),
  }),
});

export const updateFactoryConfig = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/factory-workers/config',
  auth: 'bearer',
  summary: 'Size the organization’s factory pool',
  description:
    `The organization’s own setting (other organizations’ pools are sized by theirs): \`worker_count\` ` +
    `${WORKER_COUNT.min}–${WORKER_COUNT.max} (default ${WORKER_COUNT.default}) workers, running at most ` +
    `\`max_concurrent\` ${MAX_CONCURRENT.min}–${MAX_CONCURRENT.max} (default ${MAX_CONCURRENT.default}) jobs at ` +
    'once between them. Fields not sent keep their value; at least one is required. A running pool applies it ' +
    'at its next heartbeat (within 10 s): more workers start at once, fewer stop after their current jobs.',
  body: z
    .object({
      worker_count: z.number().int().min(WORKER_COUNT.min).max(WORKER_COUNT.max).optional(),
      max_concurrent: z.number().int().min(MAX_CONCURRENT.min).max(MAX_CONCURRENT.max).optional(),
    })
    .refine((body) => body.worker_count !== undefined || body.max_concurrent !== undefined, {
      message: 'send worker_count, max_concurrent or both',
    }),
  response: Config,
});

export const factoryHealthSummary = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/factory-workers/health-summary',
  auth: 'bearer',
  summary: 'Factory health and alerts',
  description:
    '`status` is healthy, warning or critical, the worst of `alerts`: `stuck_jobs` (warning: running jobs past ' +
    `their lease), \`dead_jobs\` (warning: jobs that went dead in the last ${DEAD_WINDOW_HOURS} hours) and ` +
    `\`idle_pool_with_backlog\` (critical: a claimable job has waited ${BACKLOG_ALERT_SECONDS} s or more and no ` +
    'worker is busy).',
  response: z.object({
    status: z.enum(['healthy', 'warning', 'critical']),
    checked_at: z.string(),
    alerts: z.array(
      z.object({
        code: z.enum(['stuck_jobs', 'dead_jobs', 'idle_pool_with_backlog']),
        severity: z.enum(['warning', 'critical']),
        message: z.string(),
        count: count,
        job_ids: z.array(z.string()).meta({ description: 'Up to 10 of the jobs concerned, where they are known' }),
      }),
    ),
    pool: z.object({ running: z.boolean(), workers: count, busy_workers: count }),
    backlog: z.object({ pending: count, queued: count, oldest_waiting_seconds: count.nullable() }),
  }),
});
