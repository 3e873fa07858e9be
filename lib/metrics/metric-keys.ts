import { tenantPk } from '#lib/db/keys';

/**
 * Counters kept on write for the dashboards (lib/dashboard): each changes in the transaction of the
 * change it counts (lib/db/counters.ts), so a dashboard reads a few counter items instead of the
 * records they count, whatever their number. Counters that many writers change at once are sharded;
 * a reader sums the shards with one Query.
 *
 * | record | pk | sk | attributes |
 * |---|---|---|---|
 * | organization totals | `T#<org>#METRICS` | `TOTALS#<shard>` | see OrgTotal below |
 * | organization day | `T#<org>#METRICS` | `DAY#<yyyy-mm-dd>#<shard>` | `day`, see ORG_DAY below; TTL 40 days |
 * | instance totals | `METRICS` | `TOTALS#<shard>` | see INSTANCE_COUNTERS below |
 *
 * The instance totals are the only counters GET /dashboard (no credential) reads: they hold numbers of
 * the whole instance and nothing of any organization. They live in their own partition, beside no
 * tenant's records.
 */
export const ORG_SHARDS = 4;
/** Every organization's changes meet in the instance totals, hence more shards. */
export const INSTANCE_SHARDS = 16;
/** Day counters outlive the longest window read from them (7 days) by far. */
export const DAY_TTL_DAYS = 40;

export const metricKeys = {
  orgPk: (orgId: string): string => `${tenantPk(orgId)}#METRICS`,
  totals: (shard: number): string => `TOTALS#${shard}`,
  totalsPrefix: 'TOTALS#',
  day: (day: string, shard: number): string => `DAY#${day}#${shard}`,
  dayPrefix: 'DAY#',
  instancePk: 'METRICS',
};

/** `2025-01-31` of a time, UTC. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * The organization totals' attributes: `tasks_<status>` (tasks by status, changed by every create,
 * transition and delete: lib/tasks/task-metrics.ts), `executions_<status>` (pipeline executions by
 * status: lib/pipelines/execution-metrics.ts), `products` and `pipelines` (created, less deleted),
 * `tokens_used` (every `consume` of the ledger: lib/tokens/ledger.ts) and `agent_runs_succeeded`,
 * `agent_runs_failed` (lib/agents/run-results.ts).
 */
export type OrgTotal =
  | `tasks_${string}`
  | `executions_${string}`
  | 'products'
  | 'pipelines'
  | 'tokens_used'
  | 'agent_runs_succeeded'
  | 'agent_runs_failed';

/** The organization's counters per UTC day, for the 7-day usage of GET /dashboard/overview. */
export const ORG_DAY = ['tokens_used', 'agent_runs', 'tasks_completed', 'executions_started'] as const;
export type OrgDayCounter = (typeof ORG_DAY)[number];

/** The instance totals: organizations (less deleted ones), agents, tasks (less deleted ones), executions. */
export const INSTANCE_COUNTERS = ['organizations', 'agents', 'tasks', 'executions'] as const;
export type InstanceCounter = (typeof INSTANCE_COUNTERS)[number];
