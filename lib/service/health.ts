import { getHeapStatistics } from 'node:v8';
import { pingTable } from '#lib/db/ping';
import { APP_VERSION, uptimeSeconds } from '#lib/version';

/**
 * The probes behind /health, /ready, /arch-health and /v1/public/health. No cache sits in front of
 * the table in this architecture, so `cache` reports `not_configured`.
 */
export interface HealthRecord {
  status: 'ok' | 'error';
  version: string;
  uptime: number;
  db: 'connected' | 'error';
  cache: 'connected' | 'disconnected' | 'not_configured' | 'error';
}

export interface ProbeOptions {
  timeoutMs: number;
}

export async function health(options: ProbeOptions): Promise<HealthRecord> {
  const database = await pingTable(options.timeoutMs);
  return {
    status: database.ok ? 'ok' : 'error',
    version: APP_VERSION,
    uptime: uptimeSeconds(),
    db: database.ok ? 'connected' : 'error',
    cache: 'not_configured',
  };
}

export async function readiness(options: ProbeOptions) {
  const database = await pingTable(options.timeoutMs);
  return { ready: database.ok, db: database.ok ? ('connected' as const) : ('error' as const) };
}

/** Memory above this share of the heap limit marks the instance degraded. */
const HEAP_DEGRADED_RATIO = 0.9;

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

export interface ArchHealthOptions extends ProbeOptions {
  gitSha: string | undefined;
}

export async function archHealth(options: ArchHealthOptions) {
  const database = await pingTable(options.timeoutMs);
  const memory = process.memoryUsage();
  const heapLimit = getHeapStatistics().heap_size_limit;
  const memoryOk = memory.heapUsed < heapLimit * HEAP_DEGRADED_RATIO;
  const degraded = !database.ok || !memoryOk;
  return {
    status: degraded ? ('degraded' as const) : ('ok' as const),
    version: APP_VERSION,
    uptime: uptimeSeconds(),
    checks: {
      database: {
        status: database.ok ? ('ok' as const) : ('error' as const),
        latency_ms: database.latencyMs,
      },
      memory: {
        status: memoryOk ? ('ok' as const) : ('error' as const),
        rss_mb: mb(memory.rss),
        heap_used_mb: mb(memory.heapUsed),
        heap_limit_mb: mb(heapLimit),
      },
      git: {
        status: options.gitSha ? ('ok' as const) : ('unknown' as const),
        commit: options.gitSha ?? null,
      },
      tunnel: { status: 'not_configured' as const },
      rate_limits: { status: 'not_configured' as const },
    },
  };
}

export async function publicHealth(options: ProbeOptions) {
  const record = await health(options);
  return { status: record.status, version: record.version, timestamp: new Date().toISOString() };
}
