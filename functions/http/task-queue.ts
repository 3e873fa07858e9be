import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withStatus } from '#lib/http/results';
import { claimJobs } from '#lib/jobs/job-claim';
import { completeJob, failJob, heartbeatJob } from '#lib/jobs/job-finish';
import type { JobRecord } from '#lib/jobs/job-keys';
import { getJob } from '#lib/jobs/job-queries';
import { submission, submitJob } from '#lib/jobs/job-submit';
import * as routes from '#lib/routes/task-queue';

/** A new job answers 201 (the route's status); a repeated idempotency key, the first job with 200. */
const submitted = ({ job, created }: { job: JobRecord; created: boolean }) => (created ? job : withStatus(200, job));

const lease = (body: { worker_id: string; lease_token: string }) => ({
  workerId: body.worker_id,
  leaseToken: body.lease_token,
});

/** The task-queue function; tests pass options (a clock they move). */
export function taskQueueHandler(options: GroupOptions = {}) {
  return groupHandler(
    'task-queue',
    [
      route(routes.submitTask, async ({ body, ctx }) => submitted(await submitJob(ctx, 'task', submission(body)))),
      route(routes.claimTasks, async ({ body, ctx }) =>
        claimJobs(ctx, 'task', {
          workerId: body.worker_id,
          queue: body.queue_name,
          type: body.task_type,
          tenantId: body.tenant_id,
          batchSize: body.batch_size,
        }),
      ),
      route(routes.getTaskJob, async ({ params, ctx }) => getJob(ctx, params.id)),
      route(routes.completeTaskJob, async ({ params, body, ctx }) =>
        completeJob(ctx, params.id, lease(body), body.result ?? {}),
      ),
      route(routes.failTaskJob, async ({ params, body, ctx }) =>
        failJob(ctx, params.id, lease(body), { error: body.error, retryInSeconds: body.retry_in_seconds }),
      ),
      route(routes.heartbeatTaskJob, async ({ params, body, ctx }) =>
        heartbeatJob(ctx, params.id, lease(body), body.extend_seconds),
      ),
    ],
    options,
  );
}

export const handler = taskQueueHandler();
