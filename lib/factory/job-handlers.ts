import { brandAssets } from '#lib/factory/brand-assets';
import { type JobHandlers, PermanentJobError } from '#lib/factory/handler-types';

/** The job types the factory runs (handlers: lib/factory/handler-types.ts). */
export const defaultHandlers: JobHandlers = {
  /** Derived colours of a product's new brand colours, or the logo files a push changed. */
  'brand-assets': async (job) => brandAssets(job.payload),
  /** Its result is its payload: for trying the queue and the workers end to end. */
  echo: async (job) => job.payload,
  noop: async () => ({}),
};

/** The error of a job no handler takes: it fails for good, naming the types there are. */
export const unknownType = (type: string, handlers: JobHandlers): PermanentJobError =>
  new PermanentJobError(
    `No factory handler for job type "${type}"; the factory runs ${Object.keys(handlers).sort().join(', ')}`,
  );
