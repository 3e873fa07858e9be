import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import {
  BASE_BACKOFF_SECONDS,
  DEFAULT_QUEUE,
  DEFAULTS,
  IDEMPOTENCY_DAYS,
  JOB_STATUSES,
  MAX_BACKOFF_SECONDS,
  MAX_LEASE_SECONDS,
  MAX_PAYLOAD_BYTES,
  MAX_RESULT_BYTES,
  PRIORITY_MAX,
  PRIORITY_MIN,
  QUEUE_NAME_PATTERN,
  RETENTION_DAYS,
} from '#lib/jobs/job-keys';

/**
 * The task queue (`/task-queue`): workers outside the service submit, claim and finish jobs over HTTP,
 * served by the `task-queue` function. The job queue (lib/routes/job-queue.ts) is the same engine and
 * shares these shapes.
 */

const group = 'task-queue';
const tags = ['Task queue'];

export const queueName = z
  .string()
  .regex(QUEUE_NAME_PATTERN, 'letters, digits, . _ and - only (at most 64), starting with a letter or digit')
  .meta({ description: `The queue, within the organization; default \`${DEFAULT_QUEUE}\`` });

export const jobId = z
  .string()
  .regex(/^job_[0-9A-Za-z]{16}$/, 'must be a job id: job_ and 16 letters or digits')
  .meta({ description: 'The job id (`job_` and 16 letters or digits)' });

const workerId = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .meta({ description: 'Who the worker is: any name of your choice, unique among your workers' });
const leaseToken = z
  .string()
  .min(1)
  .max(64)
  .meta({ description: 'The `lease_token` the claim answered with this job' });

export const SubmitBody = z.object({
  task_type: z.string().trim().min(1).max(100).meta({ description: 'What the job is; workers may claim by type' }),
  payload: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: `Input of the job, a JSON object of at most ${MAX_PAYLOAD_BYTES} bytes; default {}` }),
  queue_name: queueName.optional(),
  priority: z
    .number()
    .int()
    .min(PRIORITY_MIN)
    .max(PRIORITY_MAX)
    .optional()
    .meta({ description: `Higher is claimed first; ${PRIORITY_MIN} to ${PRIORITY_MAX}, default ${DEFAULTS.priority}` }),
  tenant_id: z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .meta({ description: 'Your own customer id, so that workers may claim one tenant’s jobs only' }),
  max_attempts: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: `Claims before the job is dead; default ${DEFAULTS.maxAttempts}` }),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_LEASE_SECONDS)
    .optional()
    .meta({ description: `The lease a claim gets, in seconds; default ${DEFAULTS.timeoutSeconds}` }),
  idempotency_key: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({
      description:
        'A repeat of a key answers the first job with 200 (concurrent repeats too: one job is queued). Keys are ' +
        `remembered ${IDEMPOTENCY_DAYS} days past the job’s first possible start.`,
    }),
});

export const JobRecordSchema = z
  .object({
    id: z.string(),
    queue_name: z.string(),
    task_type: z.string(),
    status: z.enum(JOB_STATUSES).meta({
      description:
        'scheduled (waits for run_at), queued (claimable), running (a worker holds its lease), retrying (failed, ' +
        'claimable again from available_at), completed, dead (attempts used up, or failed for good)',
    }),
    payload: z.record(z.string(), z.unknown()),
    priority: z.number().int(),
    tenant_id: z.number().int().nullable(),
    attempts: z.number().int().meta({ description: 'Claims so far, the current one included' }),
    max_attempts: z.number().int(),
    timeout_seconds: z.number().int(),
    idempotency_key: z.string().nullable(),
    run_at: z.string().nullable(),
    available_at: z.string().meta({ description: 'When the job is (or was) claimable from' }),
    claimed_by: z.string().nullable().meta({ description: 'The worker holding (or that last held) its lease' }),
    lease_expires_at: z.string().nullable(),
    result: z.record(z.string(), z.unknown()).nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable().meta({ description: 'When the current or last attempt was claimed' }),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'Job' });

export const ClaimedJobSchema = JobRecordSchema.extend({
  lease_token: z.string().meta({
    description: 'Send it back with complete, fail and heartbeat: only the current lease’s holder may finish the job',
  }),
}).meta({ id: 'ClaimedJob' });

const STATUS_NOTE =
  `Finished jobs (completed, dead) are kept ${RETENTION_DAYS} days after the day they finished. ` +
  'When the queue’s storage cannot be reached the answer is 503 “The queue is unavailable” with Retry-After.';

export const submitTask = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/task-queue/submit',
  auth: 'bearer',
  summary: 'Submit a job',
  description: `Queues a job (201). A repeated \`idempotency_key\` answers the first job with 200. ${STATUS_NOTE}`,
  body: SubmitBody,
  response: JobRecordSchema,
  status: 201,
  alsoAnswers: [200],
});

const LEASE_RULES =
  'Only the worker holding the job’s current lease may do this: `worker_id` and `lease_token` must be those of ' +
  'the claim that holds it, else 409 CONFLICT (a worker whose lease expired and whose job was claimed again ' +
  'cannot overwrite the new holder’s result). 404 when the organization has no such job.';

export const claimTasks = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/task-queue/claim',
  auth: 'bearer',
  summary: 'Claim jobs',
  description:
    'Hands up to `batch_size` (default 1) of the queue’s claimable jobs to the worker, highest priority first ' +
    'and then the longest waiting, each with a lease of its `timeout_seconds` and a `lease_token`. A job is ' +
    'never handed to two workers. A running job whose lease expired is claimable again (a new attempt) until ' +
    'its `max_attempts`, then dead. `data` is the list of claimed jobs, or null when there was none to claim. ' +
    '`task_type` and `tenant_id` narrow what is claimed.',
  body: z.object({
    worker_id: workerId,
    queue_name: queueName.optional(),
    task_type: z.string().trim().min(1).max(100).optional(),
    tenant_id: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    batch_size: z.number().int().min(1).max(100).optional().meta({ description: 'Jobs to claim at most; 1 to 100' }),
  }),
  response: z.array(ClaimedJobSchema).nullable(),
});

const params = z.object({ id: jobId });

export const getTaskJob = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/task-queue/{id}',
  auth: 'bearer',
  summary: 'Get a job',
  description: `Any job of the organization, task queue’s or job queue’s. ${STATUS_NOTE}`,
  params,
  response: JobRecordSchema,
});

export const completeTaskJob = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/task-queue/{id}/complete',
  auth: 'bearer',
  summary: 'Complete a job',
  description: `Records the job’s \`result\` (an object of at most ${MAX_RESULT_BYTES} bytes). ${LEASE_RULES}`,
  params,
  body: z.object({
    worker_id: workerId,
    lease_token: leaseToken,
    result: z.record(z.string(), z.unknown()).optional().meta({ description: 'Default {}' }),
  }),
  response: JobRecordSchema,
  errors: [409],
});

export const failTaskJob = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/task-queue/{id}/fail',
  auth: 'bearer',
  summary: 'Fail a job',
  description:
    'With attempts left the job is `retrying`, claimable again after `retry_in_seconds` or else a backoff ' +
    `(${BASE_BACKOFF_SECONDS} s, doubling with each attempt, at most ${MAX_BACKOFF_SECONDS} s); ` +
    'with none left it is `dead`. ' +
    LEASE_RULES,
  params,
  body: z.object({
    worker_id: workerId,
    lease_token: leaseToken,
    error: z.string().trim().min(1).max(2000),
    retry_in_seconds: z.number().int().min(0).max(MAX_BACKOFF_SECONDS).optional(),
  }),
  response: JobRecordSchema,
  errors: [409],
});

export const heartbeatTaskJob = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/task-queue/{id}/heartbeat',
  auth: 'bearer',
  summary: 'Extend a job’s lease',
  description:
    'Moves the lease’s end to `extend_seconds` from now (default the job’s `timeout_seconds`), so that a long ' +
    `job is not claimed again while its worker is on it. ${LEASE_RULES}`,
  params,
  body: z.object({
    worker_id: workerId,
    lease_token: leaseToken,
    extend_seconds: z.number().int().min(1).max(MAX_LEASE_SECONDS).optional(),
  }),
  response: JobRecordSchema,
  errors: [409],
});
