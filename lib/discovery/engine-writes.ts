import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { transact } from '#lib/db/transactions';
import {
  DEFAULT_INTERVAL_MS,
  type EngineFields,
  type EngineItem,
  engineKeys,
  isInSync,
  RESERVED_ENGINE_SLUGS,
} from '#lib/discovery/engine-keys';
import {
  engineDelete,
  engineUpdate,
  getEngine,
  newEngineWrite,
  slugsStartingWith,
  unsyncedIndex,
} from '#lib/discovery/engine-records';
import { removeSchedule, syncSchedule } from '#lib/discovery/engine-schedule';
import { type Engine, engineNotFound, toEngine } from '#lib/discovery/engine-view';
import { ConflictError, isConditionFailed, ValidationError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import { createUnderSlug, slugFromName } from '#lib/products/product-slug';

/**
 * Creating, changing and deleting discovery engines. Each writes the record first (one transaction with
 * its activity entry), then tells the scheduler (lib/discovery/engine-schedule.ts says how the two stay
 * consistent when the scheduler fails). A scheduler failure is not the request's failure: the record
 * is written, and the answer shows `schedule.in_sync: false` with the scheduler's `schedule.error`.
 */

export interface NewEngine {
  name: string;
  layer: string;
  slug?: string | undefined;
  description?: string | null | undefined;
  model?: string | null | undefined;
  schedule_interval_ms?: number | undefined;
  enabled?: boolean | undefined;
}

export type EngineChanges = { [K in keyof EngineFields]?: EngineFields[K] | undefined };

const WRITE_ATTEMPTS = 4;
/** Concurrent creates of one name each take the next free generated slug, this many times at most. */
const GENERATED_SLUG_ATTEMPTS = 20;

const slugTaken = () =>
  new ConflictError('A discovery engine with this slug exists', [{ path: 'slug', message: 'is taken' }]);

const changedMeanwhile = () =>
  new ConflictError('The discovery engine kept changing while this change was applied; try again');

const activity = (principal: Principal, action: string, slug: string, metadata: Record<string, unknown>) => ({
  ...activityActor(principal),
  action,
  entity_type: 'discovery_engine',
  entity_id: slug,
  metadata,
});

/**
 * POST /discovery-engines. Without `slug`, one is generated from the name as for products (lowercase,
 * runs of other characters turned into `-`), suffixed `-2`, `-3`, … when taken; an explicit slug that
 * exists is 409. Slugs that are words of the routes (`efficiency`) count as taken.
 */
export async function createEngine(ctx: RequestContext, input: NewEngine): Promise<Engine> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  if (input.slug !== undefined && RESERVED_ENGINE_SLUGS.has(input.slug)) {
    throw new ValidationError('This slug is a word of the API', [{ path: 'slug', message: 'is reserved' }]);
  }
  const base = input.slug === undefined ? slugFromName(input.name) : undefined;
  if (base === '') {
    throw new ValidationError('The name gives no slug; send a slug', [
      { path: 'slug', message: 'is required when the name has no letters a–z or digits to make one from' },
    ]);
  }
  const id = await nextId(counterKey(engineKeys.counter, tenantPk(orgId)));
  return await createUnderSlug({
    ...(input.slug === undefined ? {} : { given: input.slug }),
    base: base ?? '',
    reserved: RESERVED_ENGINE_SLUGS,
    seen: (prefix) => slugsStartingWith({ orgId, prefix }),
    create: (slug) => writeNewEngine(ctx, principal, id, slug, input),
    taken: slugTaken,
    attempts: GENERATED_SLUG_ATTEMPTS,
    busy: 'Too many discovery engines with this name are being created at once; try again',
  });
}

async function writeNewEngine(
  ctx: RequestContext,
  principal: Principal,
  id: number,
  slug: string,
  input: NewEngine,
): Promise<Engine> {
  const orgId = principal.orgId;
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const item: EngineItem = {
    ...engineKeys.bySlug(orgId, slug),
    ...unsyncedIndex(orgId, slug, at),
    id,
    slug,
    name: input.name,
    layer: input.layer,
    description: input.description ?? null,
    model: input.model ?? null,
    schedule_interval_ms: input.schedule_interval_ms ?? DEFAULT_INTERVAL_MS,
    enabled: input.enabled ?? true,
    version: 1,
    schedule: null,
    schedule_synced_version: null,
    schedule_error: null,
    created_at: at,
    updated_at: at,
    created_by: activityActor(principal).actor_id,
  };
  await transact([
    newEngineWrite(item),
    ...activityWrites(
      orgId,
      activity(principal, 'discovery_engine.created', slug, { id, name: item.name, layer: item.layer }),
      now,
    ),
  ]);
  return toEngine((await syncSchedule(ctx, orgId, slug, item)) ?? item);
}

/**
 * PATCH /discovery-engines/{slug}. The fields given that differ are written with the activity entry; a
 * change of `schedule_interval_ms` or `enabled` then puts the schedule. Any PATCH of an engine whose
 * schedule is out of sync puts it too, even one that changes nothing (which writes nothing else).
 */
export async function updateEngine(ctx: RequestContext, slug: string, changes: EngineChanges): Promise<Engine> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
    const before = await getEngine({ orgId, slug, consistent: true });
    if (!before) throw engineNotFound();
    const changed = Object.fromEntries(
      Object.entries(changes).filter(
        ([field, value]) => value !== undefined && value !== (before[field as keyof EngineFields] ?? null),
      ),
    ) as Partial<EngineFields>;
    const fields = Object.keys(changed);
    if (fields.length === 0) return toEngine((await syncSchedule(ctx, orgId, slug, before)) ?? before);
    const touchesSchedule = 'schedule_interval_ms' in changed || 'enabled' in changed;
    const now = ctx.ports.clock.now();
    const at = now.toISOString();
    const schedule = touchesSchedule || !isInSync(before) ? 'due' : 'keep';
    try {
      await transact([
        engineUpdate({ orgId, before, changed, schedule, at }),
        ...activityWrites(orgId, activity(principal, 'discovery_engine.updated', slug, { changed: fields }), now),
      ]);
    } catch (error) {
      if (isConditionFailed(error, 'stale')) continue;
      throw error;
    }
    const after: EngineItem = {
      ...before,
      ...changed,
      version: before.version + 1,
      updated_at: at,
      ...(schedule === 'keep' ? { schedule_synced_version: before.version + 1 } : unsyncedIndex(orgId, slug, at)),
    };
    return toEngine((await syncSchedule(ctx, orgId, slug, after)) ?? after);
  }
  throw changedMeanwhile();
}

export interface DeletedEngine {
  engine: Engine;
  /** Whether the scheduler removed the schedule; when it did not, `schedule_error` says why. */
  scheduleRemoved: boolean;
  scheduleError: string | null;
}

/**
 * DELETE /discovery-engines/{slug}: the record goes first (with its activity entry), then the schedule.
 * A schedule the scheduler failed to remove runs once more, finds no engine and removes itself
 * (lib/discovery/run-start.ts); the answer says so. The engine's runs stay until they expire.
 */
export async function deleteEngine(ctx: RequestContext, slug: string): Promise<DeletedEngine> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
    const before = await getEngine({ orgId, slug, consistent: true });
    if (!before) throw engineNotFound();
    const now = ctx.ports.clock.now();
    try {
      await transact([
        engineDelete(orgId, before),
        ...activityWrites(
          orgId,
          activity(principal, 'discovery_engine.deleted', slug, { id: before.id, name: before.name }),
          now,
        ),
      ]);
    } catch (error) {
      if (isConditionFailed(error, 'stale')) continue;
      throw error;
    }
    const problem = await removeSchedule(ctx, orgId, before.id);
    return { engine: toEngine(before), scheduleRemoved: problem === null, scheduleError: problem };
  }
  throw changedMeanwhile();
}
