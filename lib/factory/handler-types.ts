import type { JobRecord } from '#lib/jobs/job-keys';

/**
 * What the factory workers do with a job, by its type. A handler answers the job's result (an object);
 * it throws to fail the attempt (retried while attempts are left), or throws PermanentJobError when the
 * same job would fail the same way again (bad input), which makes it dead at once.
 */
export interface JobRun {
  /** Aborted when the job's time (its timeout_seconds) is up or the pool stops. */
  signal: AbortSignal;
  now: () => Date;
}

export type JobHandler = (job: JobRecord, run: JobRun) => Promise<Record<string, unknown>>;
export type JobHandlers = Record<string, JobHandler>;

export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}
