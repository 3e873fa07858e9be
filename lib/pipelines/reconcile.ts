import { type TransactItem, transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { type ExecutionItem, executionKeys, type StageItem, type StageMessage } from '#lib/pipelines/execution-keys';
import {
  getExecutionItem,
  runningExecutionItems,
  stageItems,
  stageUpdate,
  tryUpdate,
} from '#lib/pipelines/execution-records';
import { sendStage } from '#lib/pipelines/executions';
import { stageTimeoutSec } from '#lib/pipelines/pipeline-keys';
import { completeExecution, queueReadyStage, stageFailed } from '#lib/pipelines/stage-finish';

/**
 * The pipeline reconciler (functions/schedule/pipeline-reconciler, every minute): drives on the running
 * executions whose engine stopped somewhere, so that none stays `running` forever. It reads the running
 * index only (lib/pipelines/execution-keys.ts), and for each execution still running:
 *
 * - a stage `running` longer than its timeout plus STAGE_TIMEOUT_MARGIN_SEC lost its consumer (a crash,
 *   a Lambda timeout): a failed attempt, retried or failed for good as the engine does (`stageFailed`);
 * - a stage `queued` since more than QUEUED_RESEND_AFTER_SEC may have lost its message: sent again (the
 *   claim is conditional, so a duplicate runs nothing); a stage queued without `queued_at` is stamped;
 * - a stage `pending` at `remaining` 0 was never queued by its last dependency: queued as fan-in does;
 * - a stage `skipped`, or `cancelled` before it ran, was moved so by a stage message that had read the
 *   execution failed or cancelled just before a rerun (lib/pipelines/execution-rerun.ts) set it running
 *   again: reopened (`pending`, then queued when ready), since nothing else would ever run it;
 * - an execution whose stages have all succeeded is completed as its last stage would have.
 *
 * Every action is one of the engine's conditional updates, so two reconcilers, or a reconciler and a
 * live consumer, never run an attempt twice nor queue a stage twice: the one whose update lands acts.
 */

/** How long past its own timeout a running stage is given before its consumer is taken for dead. */
export const STAGE_TIMEOUT_MARGIN_SEC = 60;
/** How long a stage may stay queued before its message is taken for lost. */
export const QUEUED_RESEND_AFTER_SEC = 120;

export interface ReconcileOptions {
  /** Only this organization's executions (tests share a table with others). */
  orgId?: string;
  /** Seconds before a timed-out stage's next attempt; the engine's delays by default. */
  retryDelaysSeconds?: number[];
}

export type ReconcileAction = 'retried' | 'failed' | 'resent' | 'stamped' | 'queued' | 'reopened' | 'completed';

export interface ReconcileReport {
  executions: number;
  actions: number;
}

/** The organization of an execution item: its partition key is `T#<org>`. */
const orgOf = (item: ExecutionItem): string => item.pk.slice(2);

export async function reconcileExecutions(
  ctx: RequestContext,
  options: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const running = (await runningExecutionItems()).filter(
    (item) => options.orgId === undefined || orgOf(item) === options.orgId,
  );
  const actions = await Promise.all(running.map((item) => reconcileExecution(ctx, item, options)));
  return { executions: running.length, actions: actions.reduce((sum, count) => sum + count, 0) };
}

function logAction(action: ReconcileAction, orgId: string, execution: ExecutionItem, stage?: StageItem) {
  logger.info('pipeline reconciler', {
    action,
    orgId,
    pipelineId: execution.pipeline_id,
    executionId: execution.id,
    ...(stage ? { stage: stage.name, attempts: stage.attempts } : {}),
  });
}

/** The actions taken on one execution (read again, strongly consistent: the index may lag). */
async function reconcileExecution(
  ctx: RequestContext,
  indexed: ExecutionItem,
  options: ReconcileOptions,
): Promise<number> {
  const orgId = orgOf(indexed);
  const [execution, stages] = await Promise.all([
    getExecutionItem({ orgId, pipelineId: indexed.pipeline_id, id: indexed.id }),
    stageItems(orgId, indexed.id),
  ]);
  if (execution?.status !== 'running') return 0;
  if (await completeExecution(ctx, orgId, execution)) {
    logAction('completed', orgId, execution);
    return 1;
  }
  const taken = await Promise.all(stages.map((stage) => reconcileStage(ctx, orgId, execution, stage, options)));
  for (const [at, action] of taken.entries()) {
    if (action) logAction(action, orgId, execution, stages[at]);
  }
  return taken.filter(Boolean).length;
}

async function reconcileStage(
  ctx: RequestContext,
  orgId: string,
  execution: ExecutionItem,
  stage: StageItem,
  options: ReconcileOptions,
): Promise<ReconcileAction | undefined> {
  const now = ctx.ports.clock.now().getTime();
  const base = { org_id: orgId, pipeline_id: execution.pipeline_id, execution_id: execution.id };
  if (stage.status === 'pending') {
    return (await queueReadyStage(ctx, base, stage)) ? 'queued' : undefined;
  }
  if ((stage.status === 'skipped' || stage.status === 'cancelled') && stage.output == null) {
    return (await reopenStage(ctx, orgId, execution, stage)) ? 'reopened' : undefined;
  }
  if (stage.status === 'running') {
    const limitMs = (stageTimeoutSec(stage) + STAGE_TIMEOUT_MARGIN_SEC) * 1000;
    if (!stage.started_at || now - Date.parse(stage.started_at) <= limitMs) return undefined;
    const message: StageMessage = { ...base, stage: stage.name, attempt: stage.attempts };
    const outcome = await stageFailed(
      ctx,
      { orgId, execution, stage, message },
      'The stage’s run stopped without a result within its time limit',
      { retry: true, ...(options.retryDelaysSeconds ? { retryDelaysSeconds: options.retryDelaysSeconds } : {}) },
    );
    if (outcome === 'retrying') return 'retried';
    return outcome === 'failed' ? 'failed' : undefined;
  }
  if (stage.status !== 'queued') return undefined;
  const at = new Date(now).toISOString();
  if (!stage.queued_at) return (await tryUpdate(restamp(orgId, stage, at))) ? 'stamped' : undefined;
  if (now - Date.parse(stage.queued_at) <= QUEUED_RESEND_AFTER_SEC * 1000) return undefined;
  // Only the reconciler whose restamp lands sends; the message's claim lets only one delivery run.
  if (!(await tryUpdate(restamp(orgId, stage, at)))) return undefined;
  await sendStage(ctx, { ...base, stage: stage.name, attempt: stage.attempts + 1, agent: stage.agent });
  return 'resent';
}

/**
 * The stage's `queued_at` moved to `at`, on condition that it is still queued for the same attempt with
 * the `queued_at` read (absent or null when it had none).
 */
function restamp(orgId: string, stage: StageItem, at: string): TransactItem {
  const write = stageUpdate(orgId, stage, ['queued'], { status: 'queued', queued_at: at }, stage.attempts);
  if (!('Update' in write)) return write;
  const update = write.Update;
  const same = stage.queued_at
    ? 'queued_at = :queuedBefore'
    : '(attribute_not_exists(queued_at) OR attribute_type(queued_at, :nullType))';
  return {
    ...write,
    Update: {
      ...update,
      ConditionExpression: `${update.ConditionExpression} AND ${same}`,
      ExpressionAttributeValues: {
        ...update.ExpressionAttributeValues,
        ...(stage.queued_at ? { ':queuedBefore': stage.queued_at } : { ':nullType': 'NULL' }),
      },
    },
  };
}

/**
 * A stage skipped or cancelled without having run, in a running execution, back to `pending` (and queued
 * when ready), on condition that the execution is still running and the stage as read: the engine skips
 * or cancels stages only after their execution has ended, so the stages of an execution ending at this
 * moment are left alone. A stage that finished its run (cancelled with its output) is never reopened:
 * it was paid for once.
 */
async function reopenStage(
  ctx: RequestContext,
  orgId: string,
  execution: ExecutionItem,
  stage: StageItem,
): Promise<boolean> {
  const reopened = { status: 'pending' as const, attempts: 0, error: null, started_at: null, finished_at: null };
  try {
    await transact([
      {
        ConditionCheck: {
          Key: executionKeys.byId(orgId, execution.pipeline_id, execution.id),
          ConditionExpression: '#status = :running',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':running': 'running' },
        },
        reason: 'execution-ended',
      },
      stageUpdate(orgId, stage, [stage.status], reopened, stage.attempts),
    ]);
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
  const base = { org_id: orgId, pipeline_id: execution.pipeline_id, execution_id: execution.id };
  await queueReadyStage(ctx, base, { ...stage, ...reopened });
  return true;
}
