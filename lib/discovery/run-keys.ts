import { pad, type TableKey, tenantPk } from '#lib/db/keys';
import type { TokenUsage } from '#lib/kernel/ports';

/**
 * Where discovery runs live (writes: lib/discovery/run-records.ts). Runs grow with every schedule tick,
 * so they live in a partition of their own per engine, never beside the records request paths query,
 * and expire RUN_RETENTION_DAYS after they end. The engine keeps its stats as counters
 * (lib/discovery/engine-keys.ts), so nothing ever reads every run.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | run | `T#<org>#DISCOVERYRUNS#<engine id>` | `RUN#<run id>` | `expires_at`: TTL once ended |
 * | … while queued or running | gsi1 `DISCOVERYRUN#ACTIVE` | `<queued_at>#<org>#<engine id>#<run id>` | |
 * | run count | `T#<org>` | `COUNTER#discovery-runs` | the sequence of run ids (per organization) |
 *
 * Ids are padded, so the partition read backwards is newest first (GET /discovery-engines/{slug}). The
 * active index holds only runs not yet ended (the update that ends a run removes its keys), so the
 * reconciler (lib/discovery/reconcile.ts) reads those alone to end runs whose worker stopped.
 */
export const runKeys = {
  partition: (orgId: string, engineId: number): string => `${tenantPk(orgId)}#DISCOVERYRUNS#${pad(engineId)}`,
  byId: (orgId: string, engineId: number, runId: number): TableKey => ({
    pk: runKeys.partition(orgId, engineId),
    sk: `RUN#${pad(runId)}`,
  }),
  prefix: 'RUN#',
  counter: 'discovery-runs',
  activePk: 'DISCOVERYRUN#ACTIVE',
  activeSort: (queuedAt: string, orgId: string, engineId: number, runId: number) =>
    `${queuedAt}#${orgId}#${pad(engineId)}#${pad(runId)}`,
};

/** How many runs GET /discovery-engines/{slug} shows, newest first. */
export const RECENT_RUNS = 20;

/** Days an ended run is kept. */
export const RUN_RETENTION_DAYS = 90;

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** `manual`: POST /discovery-engines/{slug}/run; `schedule`: the engine's schedule. */
export type RunTrigger = 'manual' | 'schedule';

export interface RunItem extends TableKey {
  gsi1pk?: string;
  gsi1sk?: string;
  id: number;
  engine_id: number;
  engine_slug: string;
  trigger: RunTrigger;
  status: RunStatus;
  /** The model asked for (the engine's) until the run ends, then the model that answered. */
  model: string | null;
  /** What the model reported; null when the run failed before it answered. */
  usage: TokenUsage | null;
  /** Tokens consumed from the organization's balance: the usage of a succeeded run, 0 otherwise. */
  tokens_used: number;
  cost_micro_usd: number;
  /** From the claim to the end, as the clock measured it. */
  compute_ms: number;
  /** What the run discovered (lib/discovery/run-cost.ts); null until it succeeds. */
  findings: number | null;
  summary: string | null;
  error: string | null;
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  expires_at?: number;
}
