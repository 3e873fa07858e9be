import type { Page, PageRequest } from '#lib/db/paging';
import type { EngineItem } from '#lib/discovery/engine-keys';
import { allEngines, getEngine } from '#lib/discovery/engine-records';
import { type Engine, engineNotFound, type Run, statsOf, toEngine, toRun } from '#lib/discovery/engine-view';
import { minutes, priceBasis, usd } from '#lib/discovery/run-cost';
import { RECENT_RUNS } from '#lib/discovery/run-keys';
import { recentRuns } from '#lib/discovery/run-records';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/** Reading discovery engines: the list with run stats, one engine with its recent runs, the efficiency report. */

/** GET /discovery-engines: oldest first, each with its run stats (counters on the engine, no run is read). */
export async function listEngines(ctx: RequestContext, page: PageRequest): Promise<Page<Engine>> {
  const engines = await allEngines(requirePrincipal(ctx).orgId);
  return { items: engines.slice(page.offset, page.offset + page.limit).map(toEngine), total: engines.length };
}

/** GET /discovery-engines/{slug}: the engine with its RECENT_RUNS newest runs. */
export async function getEngineDetail(ctx: RequestContext, slug: string): Promise<Engine & { recent_runs: Run[] }> {
  const orgId = requirePrincipal(ctx).orgId;
  const engine = await getEngine({ orgId, slug });
  if (!engine) throw engineNotFound();
  const runs = await recentRuns({ orgId, engineId: engine.id, limit: RECENT_RUNS });
  return { ...toEngine(engine), recent_runs: runs.map(toRun) };
}

export interface EfficiencyFigures {
  runs: number;
  succeeded: number;
  failed: number;
  empty: number;
  findings: number;
  tokens_used: number;
  cost_usd: number;
  compute_minutes: number;
  waste: { runs: number; tokens: number; cost_usd: number; compute_minutes: number };
  /** Wasted tokens over tokens used; null before any token was used. */
  waste_share: number | null;
  /** Cost over findings; null before anything was found. */
  cost_per_finding_usd: number | null;
}

export interface EngineEfficiency extends EfficiencyFigures {
  slug: string;
  name: string;
  layer: string;
  model: string | null;
}

const share = (part: number, whole: number): number | null =>
  whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;

/** The figures of one engine's counters, or of several summed. */
function figures(items: EngineItem[]): EfficiencyFigures {
  const sum = (pick: (stats: ReturnType<typeof statsOf>) => number) =>
    items.reduce((total, item) => total + pick(statsOf(item)), 0);
  const findings = sum((stats) => stats.findings);
  const cost = sum((stats) => stats.cost_micro_usd);
  const tokens = sum((stats) => stats.tokens_used);
  const wasteTokens = sum((stats) => stats.waste_tokens);
  return {
    runs: sum((stats) => stats.runs),
    succeeded: sum((stats) => stats.runs_succeeded),
    failed: sum((stats) => stats.runs_failed),
    empty: sum((stats) => stats.runs_empty),
    findings,
    tokens_used: tokens,
    cost_usd: usd(cost),
    compute_minutes: minutes(sum((stats) => stats.compute_ms)),
    waste: {
      runs: sum((stats) => stats.runs_failed + stats.runs_empty),
      tokens: wasteTokens,
      cost_usd: usd(sum((stats) => stats.waste_cost_micro_usd)),
      compute_minutes: minutes(sum((stats) => stats.waste_compute_ms)),
    },
    waste_share: share(wasteTokens, tokens),
    cost_per_finding_usd: findings === 0 ? null : usd(cost / findings),
  };
}

/**
 * GET /discovery-engines/efficiency: per engine, dearest first (then by slug), and for all engines
 * together; definitions of cost, findings and waste: lib/discovery/run-cost.ts.
 */
export async function engineEfficiency(ctx: RequestContext) {
  const engines = await allEngines(requirePrincipal(ctx).orgId);
  const rows: EngineEfficiency[] = engines.map((item) => ({
    slug: item.slug,
    name: item.name,
    layer: item.layer,
    model: item.model ?? null,
    ...figures([item]),
  }));
  rows.sort((a, b) => b.cost_usd - a.cost_usd || a.slug.localeCompare(b.slug));
  return { price: priceBasis(), engines: rows, totals: figures(engines) };
}
