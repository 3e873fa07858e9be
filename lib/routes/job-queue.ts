import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery, valueList } from '#lib/http/schemas';
import { JOB_STATUSES, MAX_SCHEDULE_DAYS, RETENTION_DAYS } from '#lib/jobs/job-keys';
import { JobRecordSchema, queueName, SubmitBody } from '#lib/routes/task-queue';

/**
 * The job queue (`/job-queue`): named queues of work the service's own factory workers do
 * (lib/factory), on the same engine as the task queue; served by the `job-queue` function.
 */

const group = 'job-queue';
const tags = ['Job queue'];

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

const runAt = z
  .string()
  .refine(
    (value) => ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)),
    'must be an ISO 8601 date-time with a zone, e.g. 2030-01-31T17:00:00Z',
  )
  .transform((value) => new Date(value))
  .meta({
    description:
      'When the job becomes claimable: a future ISO 8601 date-time with a zone, ' +
      `at most ${MAX_SCHEDULE_DAYS} days ahead`,
  });

const FACTORY_NOTE =
  'The factory workers (GET /factory-workers) claim the job queue’s jobs and run them by `task_type`: ' +
  '`brand-assets`, `echo` (its result is its payload) and `noop`; a job of any other type fails for good ' +
  '(dead) with an error naming the types there are.';

export const submitJob = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/job-queue/submit',
  auth: 'bearer',
  summary: 'Submit a job to the job queue',
  description:
    'The same body as POST /task-queue/submit; the job goes to the job queue’s `queue_name`. A repeated ' +
    `\`idempotency_key\` answers the first job with 200. ${FACTORY_NOTE}`,
  body: SubmitBody,
  response: JobRecordSchema,
  status: 201,
  alsoAnswers: [200],
});

export const submitScheduledJob = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/job-queue/submit-scheduled',
  auth: 'bearer',
  summary: 'Schedule a job',
  description:
    'As POST /job-queue/submit, with `run_at`: the job is `scheduled` and no worker can claim it before then; ' +
    'it becomes `queued` when a worker next asks for work after `run_at`. A `run_at` that is not in the ' +
    'future is a 400.',
  body: SubmitBody.extend({ run_at: runAt }),
  response: JobRecordSchema,
  status: 201,
  alsoAnswers: [200],
});

const count = z.number().int().min(0);
const StatusCounts = z.object(
  Object.fromEntries(JOB_STATUSES.map((status) => [status, count])) as Record<
    (typeof JOB_STATUSES)[number],
    typeof count
  >,
);

export const QueueStatsSchema = z
  .object({
    queue_name: z.string(),
    counts: StatusCounts.meta({
      description: `Jobs by status; completed and dead ones of the last ${RETENTION_DAYS} days (the ones kept)`,
    }),
    pending: count.meta({ description: 'Jobs not finished: scheduled, queued, retrying and running' }),
    oldest_waiting_at: z
      .string()
      .nullable()
      .meta({ description: 'Since when the longest-waiting claimable job has been claimable' }),
    oldest_waiting_seconds: count.nullable(),
    totals: z
      .object({ submitted: count, completed: count, dead: count, failed_attempts: count })
      .meta({ description: 'Since the queue’s first job' }),
    average_run_ms: count.nullable().meta({ description: 'Mean time from claim to completion' }),
  })
  .meta({ id: 'QueueStats' });

export const jobQueueStats = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/job-queue/stats',
  auth: 'bearer',
  summary: 'Job queue stats',
  description:
    'Per queue of the job queue: jobs by status, the longest wait of a claimable job and all-time totals; ' +
    'then the same summed. Read from counts kept with every change, not by reading the jobs.',
  response: z.object({
    queues: z.array(QueueStatsSchema),
    counts: StatusCounts,
    pending: count,
    oldest_waiting_at: z.string().nullable(),
    oldest_waiting_seconds: count.nullable(),
  }),
});

export const listQueueJobs = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/job-queue/{queue}/jobs',
  auth: 'bearer',
  summary: 'List a queue’s jobs',
  description:
    'Paged. `status` (comma-separated) narrows the list; without it every status is listed: running, then ' +
    'queued, retrying and scheduled (each soonest first), then dead and completed (each newest first). ' +
    `Completed and dead jobs are kept ${RETENTION_DAYS} days after the day they finished. An unknown queue ` +
    'lists nothing.',
  params: z.object({ queue: queueName }),
  query: pagingQuery.extend({ status: valueList(JOB_STATUSES, 'status').optional() }),
  response: JobRecordSchema,
  envelope: 'list',
});
