import { type ActivityEntry, activityActor, activityWrites } from '#lib/activity/activity-log';
import { oneLine } from '#lib/agents/agent-schedule';
import { allOf, itemExists } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { type TransactItem, transact } from '#lib/db/transactions';
import { type EngineItem, engineKeys } from '#lib/discovery/engine-keys';
import { getEngine } from '#lib/discovery/engine-records';
import { removeSchedule } from '#lib/discovery/engine-schedule';
import { engineNotFound, type Run, toRun } from '#lib/discovery/engine-view';
import { executeRun } from '#lib/discovery/run-execute';
import { failRun, type RunOutcome } from '#lib/discovery/run-finish';
import { type RunItem, type RunTrigger, runKeys } from '#lib/discovery/run-keys';
import { newRunWrite, recentRuns } from '#lib/discovery/run-records';
import { isConditionFailed, NotFoundError, ServiceUnavailableError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/**
 * Starting discovery runs: asked for (POST /discovery-engines/{slug}/run: the run is written `queued`
 * and one message goes to the `discovery-run` queue, whose consumer executes it), or by the engine's
 * schedule (functions/schedule/discovery-run: the run is written and executed at once, in that
 * invocation). Either way the run record exists before anything runs, so every run is accounted for.
 */

/** The message of the `discovery-run` queue: which run to execute. */
export interface RunMessage {
  org_id: string;
  engine_id: number;
  run_id: number;
}

/** What an engine's schedule hands its target (lib/discovery/engine-schedule.ts `scheduleSpec`). */
export interface ScheduleEvent {
  org_id: string;
  engine_id: number;
  slug: string;
}

/** The engine is still the one the run is for: not deleted, nor replaced under its slug (reason `engine-gone`). */
const engineStillThere = (orgId: string, engine: EngineItem): TransactItem => ({
  ConditionCheck: {
    Key: engineKeys.bySlug(orgId, engine.slug),
    ConditionExpression: allOf(itemExists, '#id = :id'),
    ExpressionAttributeNames: { '#id': 'id' },
    ExpressionAttributeValues: { ':id': engine.id },
  },
  reason: 'engine-gone',
});

async function newRun(
  ctx: RequestContext,
  orgId: string,
  engine: EngineItem,
  trigger: RunTrigger,
  entry?: Pick<ActivityEntry, 'actor_type' | 'actor_id'>,
): Promise<RunItem> {
  const runId = await nextId(counterKey(runKeys.counter, tenantPk(orgId)));
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const item: RunItem = {
    ...runKeys.byId(orgId, engine.id, runId),
    gsi1pk: runKeys.activePk,
    gsi1sk: runKeys.activeSort(at, orgId, engine.id, runId),
    id: runId,
    engine_id: engine.id,
    engine_slug: engine.slug,
    trigger,
    status: 'queued',
    model: engine.model,
    usage: null,
    tokens_used: 0,
    cost_micro_usd: 0,
    compute_ms: 0,
    findings: null,
    summary: null,
    error: null,
    queued_at: at,
    started_at: null,
    finished_at: null,
  };
  // A run asked for is an act of its caller, recorded as such; scheduled runs are recorded when they end.
  const recorded = entry
    ? activityWrites(
        orgId,
        {
          ...entry,
          action: 'discovery_engine.run_queued',
          entity_type: 'discovery_engine',
          entity_id: engine.slug,
          metadata: { run_id: runId },
        },
        now,
      )
    : [];
  try {
    await transact([newRunWrite(item), engineStillThere(orgId, engine), ...recorded]);
  } catch (error) {
    throw isConditionFailed(error, 'engine-gone') ? engineNotFound() : error;
  }
  return item;
}

/**
 * POST /discovery-engines/{slug}/run: answers the run, `queued`. When the queue refuses the message, the
 * run is ended as failed (saying so) and the answer is 503: nothing would ever execute it.
 */
export async function queueRun(ctx: RequestContext, slug: string): Promise<Run> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const engine = await getEngine({ orgId, slug, consistent: true });
  if (!engine) throw engineNotFound();
  const run = await newRun(ctx, orgId, engine, 'manual', activityActor(principal));
  const message: RunMessage = { org_id: orgId, engine_id: engine.id, run_id: run.id };
  try {
    await ctx.ports.queue.send('discovery-run', message);
  } catch (error) {
    await failRun(ctx, orgId, run, `The run could not be queued: ${oneLine(error)}`, { from: 'queued' });
    throw new ServiceUnavailableError('The run could not be queued; try again', error);
  }
  return toRun(run);
}

/**
 * One tick of an engine's schedule. The record is the authority: a disabled engine's tick runs nothing
 * (whatever the scheduler does), and a tick while the engine's latest run is still queued or running is
 * skipped, so that slow runs never pile up. A tick whose engine is gone (deleted, or replaced under its
 * slug) removes its own schedule: the repair of a delete whose scheduler call failed.
 */
export async function runScheduled(ctx: RequestContext, event: ScheduleEvent): Promise<RunOutcome> {
  const orgId = event.org_id;
  const engine = await getEngine({ orgId, slug: event.slug, consistent: true });
  if (!engine || engine.id !== event.engine_id) {
    await removeSchedule(ctx, orgId, event.engine_id);
    return { outcome: 'skipped', reason: 'unknown_engine' };
  }
  if (!engine.enabled) return { outcome: 'skipped', reason: 'disabled' };
  const [latest] = await recentRuns({ orgId, engineId: engine.id, limit: 1 });
  if (latest && (latest.status === 'queued' || latest.status === 'running')) {
    return { outcome: 'skipped', run_id: latest.id, reason: 'busy' };
  }
  let run: RunItem;
  try {
    run = await newRun(ctx, orgId, engine, 'schedule');
  } catch (error) {
    if (error instanceof NotFoundError) return { outcome: 'skipped', reason: 'unknown_engine' };
    throw error;
  }
  return executeRun(ctx, { orgId, engineId: engine.id, runId: run.id });
}
