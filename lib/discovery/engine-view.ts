import { type EngineItem, emptyStats, engineScheduleName, isInSync, STAT_FIELDS } from '#lib/discovery/engine-keys';
import { minutes, usd } from '#lib/discovery/run-cost';
import type { RunItem, RunStatus, RunTrigger } from '#lib/discovery/run-keys';
import { NotFoundError } from '#lib/errors';
import type { TokenUsage } from '#lib/kernel/ports';

/** Engines and runs as the API shows them: mapped from their items explicitly, never keys or index attributes. */

export interface EngineScheduleView {
  /** The schedule's name at the scheduler. */
  name: string;
  /** Whether the scheduler holds the engine's current interval and enabled state. */
  in_sync: boolean;
  /** As the scheduler last answered (null until it first did). */
  expression: string | null;
  enabled: boolean | null;
  interval_sec: number | null;
  note: string | null;
  /** Why the last scheduler call failed, until one succeeds. */
  error: string | null;
}

export interface EngineStatsView {
  runs: number;
  succeeded: number;
  failed: number;
  empty: number;
  findings: number;
  tokens_used: number;
  cost_usd: number;
  compute_minutes: number;
  last_run_at: string | null;
  last_run_status: string | null;
}

export interface Engine {
  id: number;
  slug: string;
  name: string;
  layer: string;
  description: string | null;
  model: string | null;
  schedule_interval_ms: number;
  enabled: boolean;
  schedule: EngineScheduleView;
  stats: EngineStatsView;
  created_at: string;
  updated_at: string;
}

export interface Run {
  id: number;
  engine: string;
  trigger: RunTrigger;
  status: RunStatus;
  model: string | null;
  usage: TokenUsage | null;
  tokens_used: number;
  cost_usd: number;
  compute_minutes: number;
  findings: number | null;
  summary: string | null;
  error: string | null;
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export const engineNotFound = (): NotFoundError => new NotFoundError('Discovery engine not found');

/** The orgId of an engine item (`T#<org>`). */
export const orgOfEngine = (item: Pick<EngineItem, 'pk'>): string => item.pk.slice(2);

/** The stats counters of an item, 0 where a counter was never added to. */
export const statsOf = (item: EngineItem) => {
  const stats = emptyStats();
  for (const field of STAT_FIELDS) stats[field] = Number(item[field] ?? 0);
  return stats;
};

export function toEngine(item: EngineItem): Engine {
  const stats = statsOf(item);
  return {
    id: item.id,
    slug: item.slug,
    name: item.name,
    layer: item.layer,
    description: item.description ?? null,
    model: item.model ?? null,
    schedule_interval_ms: item.schedule_interval_ms,
    enabled: item.enabled,
    schedule: {
      name: engineScheduleName(orgOfEngine(item), item.id),
      in_sync: isInSync(item),
      expression: item.schedule?.expression ?? null,
      enabled: item.schedule?.enabled ?? null,
      interval_sec: item.schedule?.interval_sec ?? null,
      note: item.schedule?.note ?? null,
      error: item.schedule_error ?? null,
    },
    stats: {
      runs: stats.runs,
      succeeded: stats.runs_succeeded,
      failed: stats.runs_failed,
      empty: stats.runs_empty,
      findings: stats.findings,
      tokens_used: stats.tokens_used,
      cost_usd: usd(stats.cost_micro_usd),
      compute_minutes: minutes(stats.compute_ms),
      last_run_at: item.last_run_at ?? null,
      last_run_status: item.last_run_status ?? null,
    },
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

export const toRun = (item: RunItem): Run => ({
  id: item.id,
  engine: item.engine_slug,
  trigger: item.trigger,
  status: item.status,
  model: item.model ?? null,
  usage: item.usage ?? null,
  tokens_used: item.tokens_used ?? 0,
  cost_usd: usd(item.cost_micro_usd ?? 0),
  compute_minutes: minutes(item.compute_ms ?? 0),
  findings: item.findings ?? null,
  summary: item.summary ?? null,
  error: item.error ?? null,
  queued_at: item.queued_at,
  started_at: item.started_at ?? null,
  finished_at: item.finished_at ?? null,
});
