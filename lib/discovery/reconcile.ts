import type { EngineItem } from '#lib/discovery/engine-keys';
import { unsyncedEngines } from '#lib/discovery/engine-records';
import { syncSchedule } from '#lib/discovery/engine-schedule';
import { orgOfEngine } from '#lib/discovery/engine-view';
import { failRun } from '#lib/discovery/run-finish';
import type { RunItem } from '#lib/discovery/run-keys';
import { activeRunsBefore, getRun } from '#lib/discovery/run-records';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';

/**
 * The discovery reconciler (functions/schedule/discovery-reconciler, every five minutes): the repair of
 * what a failed scheduler call or a stopped worker left behind. It reads two indexes only
 * (lib/discovery/engine-keys.ts, run-keys.ts), never every engine or run:
 *
 * - engines whose schedule has been out of sync for UNSYNCED_GRACE_SEC (the scheduler refused, or the
 *   request stopped between the record and the scheduler): synced as a PATCH would sync them;
 * - runs `queued` for QUEUED_LIMIT_SEC (their queue message was lost: SQS keeps none that long unseen)
 *   or `running` for RUNNING_LIMIT_SEC (longer than the worker function may run: it stopped): ended as
 *   failed, saying so. Nothing was debited for them.
 *
 * Every action is the same conditional write the request paths make, so a reconciler racing a live
 * request or worker changes nothing twice.
 */

/** Time a request is given to sync the schedule it just changed before the reconciler does. */
export const UNSYNCED_GRACE_SEC = 60;
export const QUEUED_LIMIT_SEC = 900;
/** The worker functions' timeout (300 s, serverless.yml) and a minute for the writes that end a run. */
export const RUNNING_LIMIT_SEC = 360;

export interface ReconcileOptions {
  /** Only this organization's engines and runs (tests share a table with others). */
  orgId?: string;
}

export interface ReconcileReport {
  /** Engines whose schedule was out of sync, and how many of those are now in sync. */
  schedules: { found: number; synced: number };
  /** Runs ended as failed. */
  runs_failed: number;
}

const before = (now: Date, seconds: number): string => new Date(now.getTime() - seconds * 1000).toISOString();

const orgOfRun = (run: RunItem): string => run.pk.slice(2, run.pk.indexOf('#DISCOVERYRUNS#'));

export async function reconcileDiscovery(
  ctx: RequestContext,
  options: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const now = ctx.ports.clock.now();
  const mine = (orgId: string) => options.orgId === undefined || orgId === options.orgId;
  const engines = (await unsyncedEngines(before(now, UNSYNCED_GRACE_SEC))).filter((item) => mine(orgOfEngine(item)));
  const synced = await Promise.all(engines.map((item) => resync(ctx, item)));
  const runs = (await activeRunsBefore(before(now, Math.min(QUEUED_LIMIT_SEC, RUNNING_LIMIT_SEC)))).filter((run) =>
    mine(orgOfRun(run)),
  );
  const ended = await Promise.all(runs.map((run) => endIfStuck(ctx, run, now)));
  return {
    schedules: { found: engines.length, synced: synced.filter(Boolean).length },
    runs_failed: ended.filter(Boolean).length,
  };
}

async function resync(ctx: RequestContext, item: EngineItem): Promise<boolean> {
  const orgId = orgOfEngine(item);
  try {
    const after = await syncSchedule(ctx, orgId, item.slug);
    const inSync = after === undefined || after.schedule_synced_version === after.version;
    logger.info('discovery reconciler: schedule', { orgId, slug: item.slug, inSync });
    return inSync;
  } catch (error) {
    logger.error('discovery reconciler: schedule sync failed', { orgId, slug: item.slug, error: error as Error });
    return false;
  }
}

/** Ends the run when it is (still, read consistently: the index may lag) stuck; answers whether it did. */
async function endIfStuck(ctx: RequestContext, indexed: RunItem, now: Date): Promise<boolean> {
  const orgId = orgOfRun(indexed);
  const run = await getRun({ orgId, engineId: indexed.engine_id, runId: indexed.id, consistent: true });
  if (!run) return false;
  const since = (at: string | null) => (at ? (now.getTime() - Date.parse(at)) / 1000 : 0);
  let outcome: Awaited<ReturnType<typeof failRun>> | undefined;
  if (run.status === 'queued' && since(run.queued_at) >= QUEUED_LIMIT_SEC) {
    outcome = await failRun(ctx, orgId, run, 'The run never started: its queue message was lost', { from: 'queued' });
  } else if (run.status === 'running' && since(run.started_at) >= RUNNING_LIMIT_SEC) {
    outcome = await failRun(ctx, orgId, run, 'The run was interrupted: its worker stopped before it ended');
  }
  if (outcome) logger.info('discovery reconciler: run', { orgId, engine: run.engine_slug, runId: run.id, ...outcome });
  return outcome?.outcome === 'failed';
}
