import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withStatus } from '#lib/http/results';
import type { JobRecord } from '#lib/jobs/job-keys';
import { jobQueueStats, listJobs } from '#lib/jobs/job-queries';
import { submission, submitJob } from '#lib/jobs/job-submit';
import * as routes from '#lib/routes/job-queue';

/** A new job answers 201 (the route's status); a repeated idempotency key, the first job with 200. */
const submitted = ({ job, created }: { job: JobRecord; created: boolean }) => (created ? job : withStatus(200, job));

/** The job-queue function; tests pass options (a clock they move). */
export function jobQueueHandler(options: GroupOptions = {}) {
  return groupHandler(
    'job-queue',
    [
      route(routes.submitJob, async ({ body, ctx }) => submitted(await submitJob(ctx, 'job', submission(body)))),
      route(routes.submitScheduledJob, async ({ body, ctx }) =>
        submitted(await submitJob(ctx, 'job', { ...submission(body), runAt: body.run_at })),
      ),
      route(routes.jobQueueStats, async ({ ctx }) => jobQueueStats(ctx, 'job')),
      route(routes.listQueueJobs, async ({ params, query, ctx }) =>
        listJobs(ctx, 'job', params.queue, { statuses: query.status, limit: query.limit, offset: query.offset }),
      ),
    ],
    options,
  );
}

export const handler = jobQueueHandler();
