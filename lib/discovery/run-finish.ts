import { activityWrites } from '#lib/activity/activity-log';
import { type TransactItem, transact } from '#lib/db/transactions';
import type { EngineStats } from '#lib/discovery/engine-keys';
import { engineStatsWrite } from '#lib/discovery/engine-records';
import { costMicroUsd, findingsOf } from '#lib/discovery/run-cost';
import { RUN_RETENTION_DAYS, type RunItem } from '#lib/discovery/run-keys';
import { type RunEnd, runEndUpdate } from '#lib/discovery/run-records';
import { isConditionFailed } from '#lib/errors';
import { DAY_SECONDS, epochSeconds } from '#lib/identity/ttl';
import type { RequestContext } from '#lib/kernel/context';
import type { AgentRunResult, TokenUsage } from '#lib/kernel/ports';
import { getBalance, ledgerWrites } from '#lib/tokens/ledger';

/**
 * How a discovery run ends: one transaction ends the run (it leaves the active index), adds it to its
 * engine's stats, debits its tokens from the organization's balance (succeeded runs only, once per run:
 * the ledger entry's reference id is the run's) and writes its activity entry. A run whose engine was
 * deleted meanwhile ends the same way without counting anywhere; a run another writer ended first (the
 * reconciler, a redelivered message) is left as that writer ended it.
 *
 * A succeeded run the balance cannot pay when it ends fails instead, with the balance and the tokens in
 * its error, and nothing is debited (402 semantics, as agent runs).
 */

export type RunOutcome =
  | { outcome: 'succeeded'; run_id: number; tokens: number; findings: number }
  | { outcome: 'failed'; run_id: number; error: string }
  | {
      outcome: 'skipped';
      run_id?: number;
      reason: 'not_queued' | 'ended_elsewhere' | 'unknown_engine' | 'disabled' | 'busy';
    };

/** Rounds of reading the balance again when another change moved it between the read and the debit. */
const DEBIT_ATTEMPTS = 20;

const summaryOf = (output: Record<string, unknown>): string | null =>
  typeof output.summary === 'string' ? output.summary.slice(0, 1000) : null;

const runActor = (run: RunItem) => ({ actor_type: 'system' as const, actor_id: `discovery:${run.engine_slug}` });

interface Ending {
  run: RunItem;
  from: 'queued' | 'running';
  end: RunEnd;
  add: Partial<EngineStats>;
  /** Writes only a landing end makes (the debit). */
  also: TransactItem[];
  action: string;
  metadata: Record<string, unknown>;
  now: Date;
}

/** The ending's transaction; answers false when another writer ended the run first. */
async function land(orgId: string, ending: Ending): Promise<boolean> {
  const { run, now } = ending;
  const base: TransactItem[] = [
    runEndUpdate({ orgId, engineId: run.engine_id, runId: run.id, from: ending.from, end: ending.end }),
    ...ending.also,
    ...activityWrites(
      orgId,
      {
        ...runActor(run),
        action: ending.action,
        entity_type: 'discovery_engine',
        entity_id: run.engine_slug,
        metadata: { run_id: run.id, trigger: run.trigger, ...ending.metadata },
      },
      now,
    ),
  ];
  const stats = engineStatsWrite({
    orgId,
    slug: run.engine_slug,
    engineId: run.engine_id,
    add: ending.add,
    lastRun: { at: ending.end.finished_at, status: ending.end.status },
  });
  try {
    await transact([...base, stats]);
    return true;
  } catch (error) {
    if (isConditionFailed(error, 'run-ended')) return false;
    if (!isConditionFailed(error, 'engine-gone')) throw error;
  }
  try {
    await transact(base);
    return true;
  } catch (error) {
    if (isConditionFailed(error, 'run-ended')) return false;
    throw error;
  }
}

const expiresAt = (now: Date): number => epochSeconds(now) + RUN_RETENTION_DAYS * DAY_SECONDS;

const computeMs = (run: RunItem, now: Date): number =>
  run.started_at ? Math.max(0, now.getTime() - Date.parse(run.started_at)) : 0;

/**
 * Ends a run as failed, from `from` (`queued`: it never started, so no compute time). `usage`: what the
 * model reported when it answered but the run failed after (the balance could not pay).
 */
export async function failRun(
  ctx: RequestContext,
  orgId: string,
  run: RunItem,
  error: string,
  options: { from?: 'queued' | 'running'; usage?: TokenUsage; model?: string } = {},
): Promise<RunOutcome> {
  const now = ctx.ports.clock.now();
  const from = options.from ?? 'running';
  const compute = from === 'running' ? computeMs(run, now) : 0;
  const landed = await land(orgId, {
    run,
    from,
    end: {
      status: 'failed',
      model: options.model ?? run.model,
      usage: options.usage ?? null,
      tokens_used: 0,
      cost_micro_usd: 0,
      compute_ms: compute,
      findings: null,
      summary: null,
      error,
      finished_at: now.toISOString(),
      expires_at: expiresAt(now),
    },
    add: { runs: 1, runs_failed: 1, compute_ms: compute, waste_compute_ms: compute },
    also: [],
    action: 'discovery_engine.run_failed',
    metadata: { error },
    now,
  });
  return landed
    ? { outcome: 'failed', run_id: run.id, error }
    : { outcome: 'skipped', run_id: run.id, reason: 'ended_elsewhere' };
}

/** Ends a run whose model answered: succeeded and debited, or failed when the balance cannot pay. */
export async function succeedRun(
  ctx: RequestContext,
  orgId: string,
  run: RunItem,
  result: AgentRunResult,
): Promise<RunOutcome> {
  const tokens = result.usage.total_tokens;
  const findings = findingsOf(result.output);
  for (let round = 1; ; round += 1) {
    const now = ctx.ports.clock.now();
    const { balance } = await getBalance(orgId);
    if (balance < tokens) {
      const error = `The token balance (${balance}) cannot pay for the run (${tokens} tokens)`;
      return failRun(ctx, orgId, run, error, { usage: result.usage, model: result.model });
    }
    const compute = computeMs(run, now);
    const cost = costMicroUsd(tokens, result.model);
    const empty = findings === 0;
    const debit =
      tokens > 0
        ? ledgerWrites({
            orgId,
            type: 'consume',
            amount: -tokens,
            action: 'discovery_run',
            referenceId: `discovery-run-${run.engine_id}-${run.id}`,
            metadata: { engine: run.engine_slug, run_id: run.id, model: result.model },
            actor: runActor(run).actor_id,
            now,
            balanceBefore: balance,
          }).writes
        : [];
    try {
      const landed = await land(orgId, {
        run,
        from: 'running',
        end: {
          status: 'succeeded',
          model: result.model,
          usage: result.usage,
          tokens_used: tokens,
          cost_micro_usd: cost,
          compute_ms: compute,
          findings,
          summary: summaryOf(result.output),
          error: null,
          finished_at: now.toISOString(),
          expires_at: expiresAt(now),
        },
        add: {
          runs: 1,
          runs_succeeded: 1,
          runs_empty: empty ? 1 : 0,
          findings,
          tokens_used: tokens,
          cost_micro_usd: cost,
          compute_ms: compute,
          waste_tokens: empty ? tokens : 0,
          waste_cost_micro_usd: empty ? cost : 0,
          waste_compute_ms: empty ? compute : 0,
        },
        also: debit,
        action: 'discovery_engine.run_succeeded',
        metadata: { tokens, findings, model: result.model },
        now,
      });
      return landed
        ? { outcome: 'succeeded', run_id: run.id, tokens, findings }
        : { outcome: 'skipped', run_id: run.id, reason: 'ended_elsewhere' };
    } catch (error) {
      if (!isConditionFailed(error, 'balance-moved') || round >= DEBIT_ATTEMPTS) throw error;
    }
  }
}
