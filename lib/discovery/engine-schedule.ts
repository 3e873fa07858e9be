import { oneLine } from '#lib/agents/agent-schedule';
import {
  type EngineItem,
  type EngineSchedule,
  engineScheduleName,
  intervalSecOf,
  isInSync,
} from '#lib/discovery/engine-keys';
import { getEngine, markScheduleFailed, markScheduleSynced, markScheduleUnsynced } from '#lib/discovery/engine-records';
import { isConditionFailed } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import type { ScheduleSpec, ScheduleState } from '#lib/kernel/ports';
import { logger } from '#lib/logger';

/**
 * An engine's schedule, kept in line with its record. The record is written first and is the authority;
 * the scheduler is told after, and the record then notes which version the scheduler holds
 * (`schedule_synced_version`, lib/discovery/engine-keys.ts). Every outcome leaves a state that repairs:
 *
 * - the scheduler refuses (unavailable, throttled): the record keeps `schedule_error` and stays out of
 *   sync, in the reconciler's index. The next PATCH of the engine (any PATCH, even one that changes
 *   nothing) syncs it again, and so does the reconciler (functions/schedule/discovery-reconciler), a few
 *   minutes later at most; meanwhile the answer says `schedule.in_sync: false` and why;
 * - the process stops between the two writes: the same, without the error;
 * - two changes race: each syncs by putting the whole schedule as its version of the record says, and
 *   notes it only while that version is still the record's. A sync whose version was overtaken reads
 *   the record again and puts once more, even when the newer version is noted in sync (its put may have
 *   reached the scheduler before the older one), so the last put carries the newest version, in
 *   whatever order the scheduler received them;
 * - the engine is deleted meanwhile: a sync that finds it gone removes the schedule it may have put
 *   after the delete removed it. Should a schedule still outlive its engine, its next run finds no
 *   engine and removes it (lib/discovery/run-start.ts).
 *
 * Every sync is a `put`, which creates or replaces the schedule whole (interval and enabled state): a
 * `setEnabled` on a schedule that a failed create never made would change nothing and report success.
 */

const SYNC_ATTEMPTS = 4;

export const scheduleSpec = (
  orgId: string,
  engine: Pick<EngineItem, 'id' | 'slug' | 'schedule_interval_ms' | 'enabled'>,
): ScheduleSpec => ({
  name: engineScheduleName(orgId, engine.id),
  target: 'discovery-run',
  payload: { org_id: orgId, engine_id: engine.id, slug: engine.slug },
  intervalSec: intervalSecOf(engine.schedule_interval_ms),
  enabled: engine.enabled,
});

const storedSchedule = (state: ScheduleState): EngineSchedule => ({
  expression: state.expression,
  enabled: state.enabled,
  interval_sec: state.intervalSec,
  note: state.note ?? null,
});

/**
 * Brings the engine's schedule in line with its record, when it is not already; answers the engine as
 * it then stands (undefined when it no longer exists). `known`: the engine as the caller just wrote it,
 * which saves the first read.
 */
export async function syncSchedule(
  ctx: RequestContext,
  orgId: string,
  slug: string,
  known?: EngineItem,
): Promise<EngineItem | undefined> {
  let engine = known;
  const put = new Set<number>();
  // The version this sync last put. Should the record have moved on since, that put may have landed after
  // the newer version's own put and undone it, whatever the record says: it is put again.
  let putVersion: number | undefined;
  for (let attempt = 1; attempt <= SYNC_ATTEMPTS; attempt += 1) {
    engine ??= await getEngine({ orgId, slug, consistent: true });
    if (!engine) break;
    const overtaken = putVersion !== undefined && putVersion !== engine.version;
    if (isInSync(engine) && !overtaken) return engine;
    let state: ScheduleState;
    try {
      put.add(engine.id);
      putVersion = engine.version;
      state = await ctx.ports.scheduler.put(scheduleSpec(orgId, engine));
    } catch (error) {
      const problem = oneLine(error);
      logger.warn('discovery engine schedule not synced', { orgId, slug, version: engine.version, error: problem });
      try {
        const at = ctx.ports.clock.now().toISOString();
        await markScheduleFailed({ orgId, slug, version: engine.version, error: problem, at });
        return { ...engine, schedule_synced_version: null, schedule_error: problem };
      } catch (failure) {
        if (!isConditionFailed(failure, 'stale')) throw failure;
        engine = undefined;
        continue;
      }
    }
    const schedule = storedSchedule(state);
    try {
      await markScheduleSynced({ orgId, slug, version: engine.version, schedule });
      const { gsi1pk: _pk, gsi1sk: _sk, ...rest } = engine;
      return { ...rest, schedule, schedule_synced_version: engine.version, schedule_error: null };
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      engine = undefined;
    }
  }
  // Gone, or still changing after SYNC_ATTEMPTS rounds: a put of this sync may have undone a newer one, so
  // the record is marked out of sync for the reconciler (unless it moved on again: that change puts).
  const latest = engine ?? (await getEngine({ orgId, slug, consistent: true }));
  if (latest && putVersion !== undefined && putVersion !== latest.version) {
    const at = ctx.ports.clock.now().toISOString();
    await markScheduleUnsynced({ orgId, slug, version: latest.version, at }).catch((error: unknown) => {
      if (!isConditionFailed(error, 'stale')) throw error;
    });
  }
  await removeOrphans(ctx, orgId, latest, put);
  return latest;
}

/**
 * The schedules this sync put for an engine that is gone (or was replaced under its slug by another
 * engine, whose own schedule has another name): removed, best effort.
 */
async function removeOrphans(
  ctx: RequestContext,
  orgId: string,
  current: EngineItem | undefined,
  ids: Set<number>,
): Promise<void> {
  for (const id of ids) {
    if (current?.id === id) continue;
    await removeSchedule(ctx, orgId, id);
  }
}

/** Removes the engine's schedule; answers why it could not, or null. */
export async function removeSchedule(ctx: RequestContext, orgId: string, engineId: number): Promise<string | null> {
  try {
    await ctx.ports.scheduler.remove(engineScheduleName(orgId, engineId));
    return null;
  } catch (error) {
    const problem = oneLine(error);
    logger.warn('discovery engine schedule not removed', { orgId, engineId, error: problem });
    return problem;
  }
}
