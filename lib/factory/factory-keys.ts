import { tenantPk } from '#lib/db/keys';

/**
 * The factory workers' records: each organization's pool setting, and a record of each pool running for
 * it, which the pool rewrites every heartbeat and removes when it stops (TTL as a backstop for a pool
 * that died), so GET /factory-workers shows what runs now from any function.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | config | `T#<org>#FACTORY` | `CONFIG` | `worker_count`, `max_concurrent` |
 * | running pool | `T#<org>#FACTORY` | `POOL#<runtime id>` | workers and their counts; TTL |
 *
 * The setting is per organization: the instance runs one pool for each organization with job-queue work
 * (lib/factory/factory-pool.ts), sized by that organization's setting, so one organization's backlog or
 * setting never takes another's workers.
 */
export const factoryKeys = {
  pk: (orgId: string): string => `${tenantPk(orgId)}#FACTORY`,
  config: 'CONFIG',
  pool: (runtimeId: string): string => `POOL#${runtimeId}`,
  poolPrefix: 'POOL#',
};

export const WORKER_COUNT = { min: 1, max: 32, default: 4 } as const;
export const MAX_CONCURRENT = { min: 1, max: 100, default: 8 } as const;

export interface FactoryConfig {
  /** Workers in the organization's pool, each claiming and running jobs. */
  worker_count: number;
  /** Jobs the pool runs at once, all its workers together. */
  max_concurrent: number;
  updated_at: string | null;
}

export const DEFAULT_CONFIG: FactoryConfig = {
  worker_count: WORKER_COUNT.default,
  max_concurrent: MAX_CONCURRENT.default,
  updated_at: null,
};

/** A worker as its pool last reported it. */
export interface PoolWorker {
  id: string;
  /** Jobs it holds now. */
  holding: number;
  /** Jobs it completed and failed since the pool started. */
  completed: number;
  failed: number;
}

export interface PoolItem {
  pk: string;
  sk: string;
  runtime_id: string;
  worker_count: number;
  max_concurrent: number;
  workers: PoolWorker[];
  started_at: string;
  heartbeat_at: string;
  /** Between the pool's records: a reader takes the pool for stopped after MISSED_HEARTBEATS of them. */
  heartbeat_ms: number;
  expires_at: number;
}

/** A pool that missed this many heartbeats is taken for stopped. */
export const MISSED_HEARTBEATS = 3;

/** A claimable job waiting longer than this with no worker busy raises the idle-pool alert. */
export const BACKLOG_ALERT_SECONDS = 60;
/** Dead jobs of this window raise the dead-jobs alert. */
export const DEAD_WINDOW_HOURS = 24;
