import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, PaymentRequiredError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import {
  type Execution,
  type ExecutionItem,
  type ExecutionStatus,
  executionKeys,
  type StageItem,
  toExecution,
} from '#lib/pipelines/execution-keys';
import { getExecutionItem, rerunTransactions, stageItems, stageUpdate } from '#lib/pipelines/execution-records';
import { executionNotFound, getExecution, sendQueuedStages, stageEstimate } from '#lib/pipelines/executions';
import { stageTimeoutSec } from '#lib/pipelines/pipeline-keys';
import { pipelineNotFound } from '#lib/pipelines/pipeline-queries';
import { getPipelineItem } from '#lib/pipelines/pipeline-records';
import { STAGE_TIMEOUT_MARGIN_SEC } from '#lib/pipelines/reconcile';
import { completeExecution } from '#lib/pipelines/stage-finish';
import { getBalance } from '#lib/tokens/ledger';

/**
 * POST /agent-pipelines/{id}/executions/{executionId}/rerun: a failed or cancelled execution runs again
 * from where it stopped, under the same id. The stages whose run finished are kept with their output and
 * tokens: those that succeeded, and those that finished their run after a cancel (which kept its output
 * and consumed its tokens); the latter become `succeeded`. Every other stage (failed, skipped, cancelled
 * before it ran, pending or queued) runs again from its first attempt, as the execution has it (later
 * edits of the pipeline do not apply). So no run is paid twice, and the ledger's guard on a stage's debit
 * (one per execution and stage, lib/pipelines/stage-finish.ts) holds: a stage run again has never been
 * debited.
 *
 * A stage still `running` within its time limit plus STAGE_TIMEOUT_MARGIN_SEC is waited for (409): its
 * result decides whether it is kept. Past that its consumer is taken for dead and the stage runs again;
 * should the consumer still finish, its conditional writes find the stage moved and write nothing.
 *
 * The reset is written by lib/pipelines/execution-records.ts `rerunTransactions`: every write conditional
 * on the execution being unchanged since read, the execution set running last. The execution then goes
 * back into the running index (so the reconciler drives on it), and emits at its end `pipeline_completed`
 * or `pipeline_failed` as any execution does; starting a rerun emits nothing, as execute does not.
 */

const RERUNNABLE: ReadonlySet<ExecutionStatus> = new Set(['failed', 'cancelled']);

/** How a rerun treats each stage of the execution. */
export interface RerunPlan {
  /** Run again, in stage order: `queued` at once when every dependency is kept, else `pending`. */
  run: Array<{ stage: StageItem; status: 'queued' | 'pending'; remaining: number }>;
  /** Cancelled after finishing their run: kept, and become `succeeded`. */
  promoted: StageItem[];
  /** Running within their time limit: the rerun waits for them. */
  busy: StageItem[];
  /** The stages kept (succeeded, and promoted). */
  kept: number;
}

const finishedItsRun = (stage: StageItem) =>
  stage.status === 'succeeded' || (stage.status === 'cancelled' && stage.output != null);

const byOrder = (a: StageItem, b: StageItem) => a.order - b.order || a.name.localeCompare(b.name);

/** What a rerun at `nowMs` does with each of `stages`. */
export function rerunPlan(stages: StageItem[], nowMs: number): RerunPlan {
  const kept = new Set(stages.filter(finishedItsRun).map((stage) => stage.name));
  const busy = stages.filter((stage) => {
    if (stage.status !== 'running' || !stage.started_at) return false;
    return nowMs - Date.parse(stage.started_at) <= (stageTimeoutSec(stage) + STAGE_TIMEOUT_MARGIN_SEC) * 1000;
  });
  const run = [...stages]
    .sort(byOrder)
    .filter((stage) => !kept.has(stage.name))
    .map((stage) => {
      const remaining = stage.depends_on.filter((name) => !kept.has(name)).length;
      return { stage, status: remaining === 0 ? ('queued' as const) : ('pending' as const), remaining };
    });
  const promoted = stages.filter((stage) => stage.status === 'cancelled' && kept.has(stage.name));
  return { run, promoted, busy, kept: kept.size };
}

const nothingToRerun = (status: ExecutionStatus) =>
  new ConflictError(
    status === 'succeeded'
      ? 'The execution has succeeded: there is nothing to rerun'
      : `The execution is ${status}: only a failed or cancelled execution can be rerun`,
  );

/** What the rerun route answers: the execution as it starts again, and what the rerun runs. */
export type RerunExecution = Execution & { rerun: { stages: string[]; estimated_tokens: number } };

export async function rerunExecution(ctx: RequestContext, pipelineId: number, id: number): Promise<RerunExecution> {
  const orgId = requirePrincipal(ctx).orgId;
  const [pipeline, execution, stages] = await Promise.all([
    getPipelineItem({ orgId, id: pipelineId }),
    getExecutionItem({ orgId, pipelineId, id }),
    stageItems(orgId, id),
  ]);
  if (!pipeline) throw pipelineNotFound();
  if (!execution) throw executionNotFound();
  if (!RERUNNABLE.has(execution.status)) throw nothingToRerun(execution.status);
  const now = ctx.ports.clock.now();
  const plan = rerunPlan(stages, now.getTime());
  if (plan.busy.length > 0) {
    const names = plan.busy.map((stage) => stage.name).join(', ');
    throw new ConflictError(`A stage of the execution is still running (${names}); rerun once it has ended`);
  }
  const estimated = plan.run.reduce((sum, { stage }) => sum + stageEstimate(stage), 0);
  const { balance: available } = await getBalance(orgId);
  if (available < estimated) {
    throw new PaymentRequiredError('The token balance is below the estimate of the stages to run again', [
      {
        path: 'params.executionId',
        message: `needs an estimated ${estimated} tokens, the balance has ${available}`,
        needed: estimated,
        available,
      },
    ]);
  }

  const at = now.toISOString();
  const started: ExecutionItem = {
    ...execution,
    status: 'running',
    finished_at: null,
    reruns: (execution.reruns ?? 0) + 1,
    rerun_at: at,
    stages_succeeded: plan.kept,
    gsi1pk: executionKeys.runningPk,
    gsi1sk: executionKeys.runningSort(at, orgId, pipelineId, id),
  };
  const { finished_at, reruns, rerun_at, stages_succeeded, gsi1pk, gsi1sk } = started;
  const changes = { status: 'running' as const, finished_at, reruns, rerun_at, stages_succeeded, gsi1pk, gsi1sk };
  try {
    for (const group of rerunTransactions(orgId, execution, changes, stageWrites(orgId, plan, at))) {
      await transact(group);
    }
  } catch (error) {
    if (!isConditionFailed(error)) throw error;
    const latest = (await getExecutionItem({ orgId, pipelineId, id })) ?? execution;
    if (!RERUNNABLE.has(latest.status)) throw nothingToRerun(latest.status);
    throw new ConflictError('The execution changed while the rerun was being written; read it and try again');
  }

  const rerun = { stages: plan.run.map(({ stage }) => stage.name), estimated_tokens: estimated };
  if (plan.run.length === 0) {
    // Every stage is kept: the execution completes as its last stage would have completed it.
    await completeExecution(ctx, orgId, started);
    return { ...(await getExecution(ctx, pipelineId, id)), rerun };
  }
  const next = new Map<string, StageItem>(stages.map((stage) => [stage.name, stage]));
  for (const stage of plan.promoted) next.set(stage.name, { ...stage, status: 'succeeded' });
  for (const { stage, ...fields } of plan.run) next.set(stage.name, { ...stage, ...resetFields(fields, at) });
  await sendQueuedStages(ctx, orgId, { execution: started, stages: [...next.values()] });
  return { ...toExecution(started, [...next.values()]), rerun };
}

/** A stage run again starts afresh: its first attempt, nothing of its earlier runs left on it. */
function resetFields(next: { status: 'queued' | 'pending'; remaining: number }, at: string) {
  return {
    status: next.status,
    remaining: next.remaining,
    attempts: 0,
    output: null,
    error: null,
    tokens_used: 0,
    started_at: null,
    finished_at: null,
    queued_at: next.status === 'queued' ? at : null,
  } satisfies Partial<StageItem>;
}

/**
 * Each stage's write, conditional on the stage being as read (status and attempts): a stage a late
 * consumer moved in between refuses the rerun rather than being overwritten.
 */
function stageWrites(orgId: string, plan: RerunPlan, at: string): TransactItem[] {
  return [
    ...plan.run.map(({ stage, ...next }) =>
      stageUpdate(orgId, stage, [stage.status], resetFields(next, at), stage.attempts),
    ),
    ...plan.promoted.map((stage) => stageUpdate(orgId, stage, ['cancelled'], { status: 'succeeded' }, stage.attempts)),
  ];
}
