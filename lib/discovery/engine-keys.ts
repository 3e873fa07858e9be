import { type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where discovery engines live in the table (access patterns: lib/discovery/engine-records.ts; their
 * runs: lib/discovery/run-keys.ts). An engine's slug never changes, so the record is keyed by it: the
 * key is the slug's uniqueness guard and GET /discovery-engines/{slug} is one GetItem.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | engine | `T#<org>` | `DISCOVERY#<slug>` | run stats kept by ADD as runs end; `version` raised by every change |
 * | … schedule not in sync | gsi1 `DISCOVERY#UNSYNCED` | `<updated_at>#<org>#<slug>` | the reconciler's index |
 * | engine count | `T#<org>` | `COUNTER#discovery-engines` | the sequence of engine ids |
 *
 * Each engine has one schedule (the Scheduler port) named after its integer id, not its slug, so that
 * an engine deleted and created again under the same slug never shares a schedule (or run history)
 * with its predecessor. The record is the authority on what the schedule should be; the scheduler is
 * told after the record is written (lib/discovery/engine-schedule.ts):
 *
 * - `version` is raised by every change of the engine;
 * - `schedule_synced_version` is the version whose interval and enabled state the scheduler was last
 *   seen to hold, and `schedule` what it answered; the engine's schedule is in sync when the two
 *   versions are equal;
 * - while they differ, the engine carries the gsi1 keys above, so that the reconciler
 *   (lib/discovery/reconcile.ts) finds the engines a failed or interrupted scheduler call left behind.
 */
export const engineKeys = {
  bySlug: (orgId: string, slug: string): TableKey => ({ pk: tenantPk(orgId), sk: `DISCOVERY#${slug}` }),
  prefix: 'DISCOVERY#',
  counter: 'discovery-engines',
  unsyncedPk: 'DISCOVERY#UNSYNCED',
  unsyncedSort: (at: string, orgId: string, slug: string) => `${at}#${orgId}#${slug}`,
};

/** The name of an engine's schedule (EventBridge: at most 64 of `[0-9A-Za-z._-]`; org ids are 20 characters). */
export const engineScheduleName = (orgId: string, engineId: number): string => `discovery-${orgId}-${engineId}`;

/** A slug: lowercase letters and digits in runs joined by single hyphens, at most 64 characters. */
export const ENGINE_SLUG_MAX = 64;
export const ENGINE_SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Path words of the engines' routes that a slug cannot be (`/discovery-engines/efficiency` is a report). */
export const RESERVED_ENGINE_SLUGS: ReadonlySet<string> = new Set(['efficiency']);

/** A layer names what the engine looks at (`market`, `codebase`, `l2-competitors`): free text, as design.md says. */
export const ENGINE_LAYER_MAX = 64;

/** Milliseconds between scheduled runs: at least a second, at most seven days; an hour when not given. */
export const INTERVAL_MS_MIN = 1_000;
export const INTERVAL_MS_MAX = 7 * 24 * 3_600_000;
export const DEFAULT_INTERVAL_MS = 3_600_000;

/** The scheduler works in whole seconds: an interval is rounded up to the next one. */
export const intervalSecOf = (intervalMs: number): number => Math.ceil(intervalMs / 1000);

/** The schedule as the scheduler last answered for it. */
export interface EngineSchedule {
  expression: string;
  enabled: boolean;
  /** Seconds between runs as the scheduler runs them (EventBridge: whole minutes). */
  interval_sec: number;
  note: string | null;
}

/**
 * Run stats, kept on the engine by ADD in the transaction that ends each run (lib/discovery/run-finish.ts),
 * so that lists and the efficiency report read one item per engine, never its runs. Costs are integer
 * micro-dollars, so that sums stay exact.
 */
export interface EngineStats {
  runs: number;
  runs_succeeded: number;
  runs_failed: number;
  /** Succeeded runs that found nothing (lib/discovery/run-cost.ts). */
  runs_empty: number;
  findings: number;
  tokens_used: number;
  cost_micro_usd: number;
  compute_ms: number;
  /** What failed and empty runs used (failed runs are charged no tokens, only their compute counts). */
  waste_tokens: number;
  waste_cost_micro_usd: number;
  waste_compute_ms: number;
}

export const STAT_FIELDS = [
  'runs',
  'runs_succeeded',
  'runs_failed',
  'runs_empty',
  'findings',
  'tokens_used',
  'cost_micro_usd',
  'compute_ms',
  'waste_tokens',
  'waste_cost_micro_usd',
  'waste_compute_ms',
] as const satisfies readonly (keyof EngineStats)[];

export const emptyStats = (): EngineStats =>
  Object.fromEntries(STAT_FIELDS.map((field) => [field, 0])) as unknown as EngineStats;

export interface EngineItem extends TableKey, Partial<EngineStats> {
  gsi1pk?: string;
  gsi1sk?: string;
  id: number;
  slug: string;
  name: string;
  layer: string;
  description: string | null;
  /** The model runs ask for; null: the runner's default. */
  model: string | null;
  schedule_interval_ms: number;
  enabled: boolean;
  version: number;
  schedule: EngineSchedule | null;
  schedule_synced_version: number | null;
  /** Why the last scheduler call for this engine failed, until one succeeds. */
  schedule_error: string | null;
  last_run_at?: string | null;
  last_run_status?: string | null;
  created_at: string;
  updated_at: string;
  created_by: string;
}

/** The fields a PATCH may change. */
export type EngineFields = Pick<
  EngineItem,
  'name' | 'layer' | 'description' | 'model' | 'schedule_interval_ms' | 'enabled'
>;

export const isInSync = (item: Pick<EngineItem, 'version' | 'schedule_synced_version'>): boolean =>
  item.schedule_synced_version === item.version;

/** The engine is as the writer read it (`:version`). */
export const engineVersionIs = 'version = :version';
