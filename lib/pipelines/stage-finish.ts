import { type TransactItem, transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import type { AgentRunResult } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import {
  type ExecutionItem,
  executionKeys,
  type StageItem,
  type StageMessage,
  toExecution,
} from '#lib/pipelines/execution-keys';
import { executionEndWrites } from '#lib/pipelines/execution-metrics';
import {
  executionUpdate,
  getExecutionItem,
  moveStages,
  queueIfReady,
  stageItems,
  stagesNamed,
  stageUpdate,
  tryUpdate,
} from '#lib/pipelines/execution-records';
import { sendStage } from '#lib/pipelines/executions';
import { getBalance, ledgerWrites } from '#lib/tokens/ledger';
import type { WebhookEvent } from '#lib/webhooks/outbound/event-types';
import { prepareEvent, queuePrepared } from '#lib/webhooks/outbound/events';

/**
 * How a stage's attempt ends (lib/pipelines/stage-run.ts runs it).
 *
 * Success is one transaction: the stage `running → succeeded` with its output, the execution's
 * `stages_succeeded` and `tokens_used` raised, the tokens consumed from the balance (reference
 * `pipeline-<execution>-<stage>`, so a stage is never debited twice) and every dependent's `remaining`
 * counted down. Then each dependent read back at 0 goes `pending → queued` by a conditional update and
 * only the update that lands sends its message: a fan-in stage starts once however many of its
 * dependencies finish at the same moment, and however often their messages are delivered. The last
 * stage to succeed ends the execution (`running → succeeded`, `pipeline_completed`).
 *
 * A failed attempt goes back to `queued` and is sent again after a delay, up to MAX_STAGE_ATTEMPTS
 * attempts; then the stage fails, the execution fails, its stages not yet started are `skipped`, and
 * `pipeline_failed` is emitted. A run the balance cannot pay fails at once (402 semantics: no retry).
 *
 * A stage whose run ends after its execution did (cancelled, or failed by another stage) keeps its
 * output and consumes its tokens (counted in the execution's `tokens_used`), and starts nothing: it
 * ends `cancelled` in a cancelled execution, `succeeded` in a failed one.
 */

export const MAX_STAGE_ATTEMPTS = 3;
/** Seconds before the second and third attempts. */
export const STAGE_RETRY_DELAYS_SECONDS = [2, 8];

/** A stage keeps at most this much output (JSON bytes), well below DynamoDB's 400 KB item limit. */
export const MAX_STAGE_OUTPUT_BYTES = 256 * 1024;

/** The output as the stage keeps it: whole, or, when too large, its summary's start and a mark saying so. */
function storedOutput(output: Record<string, unknown>): Record<string, unknown> {
  if (Buffer.byteLength(JSON.stringify(output)) <= MAX_STAGE_OUTPUT_BYTES) return output;
  const summary = typeof output.summary === 'string' ? output.summary.slice(0, 4096) : '';
  return { summary, truncated: true, note: `The output was larger than ${MAX_STAGE_OUTPUT_BYTES} bytes` };
}

/** Dependents counted down inside the success transaction (100 items at most, with room for the rest). */
const DEPENDENTS_IN_TRANSACTION = 90;

export interface StageRun {
  orgId: string;
  execution: ExecutionItem;
  stage: StageItem;
  message: StageMessage;
}

export type StageOutcome = 'succeeded' | 'retrying' | 'failed' | 'cancelled' | 'ignored';

export async function stageSucceeded(
  ctx: RequestContext,
  run: StageRun,
  result: AgentRunResult,
): Promise<StageOutcome> {
  const { orgId, execution, stage, message } = run;
  const tokens = Math.max(0, result.usage.total_tokens);
  // Set once the execution is found ended (cancelled, or failed by another stage) while this one ran.
  let endedAs: 'cancelled' | 'succeeded' | undefined;
  for (;;) {
    const now = ctx.ports.clock.now();
    const at = now.toISOString();
    const debit = debitWrites(run, tokens, now);
    const done = { output: storedOutput(result.output), tokens_used: tokens, finished_at: at, error: null };
    const writes = endedAs
      ? [
          stageUpdate(orgId, stage, ['running'], { status: endedAs, ...done }, message.attempt),
          executionAdd(orgId, execution, tokens, { counted: endedAs === 'succeeded', whileRunning: false }),
          ...debit,
        ]
      : [
          stageUpdate(orgId, stage, ['running'], { status: 'succeeded', ...done }, message.attempt),
          executionAdd(orgId, execution, tokens, { counted: true, whileRunning: true }),
          ...debit,
          ...stage.dependents.slice(0, DEPENDENTS_IN_TRANSACTION).map((name) => countdown(run, name)),
        ];
    try {
      await transactHot(writes);
      break;
    } catch (error) {
      if (isConditionFailed(error, 'balance-moved')) {
        const { balance } = await getBalance(orgId);
        const problem = `The token balance (${balance}) cannot pay for the stage's run (${tokens} tokens)`;
        return await stageFailed(ctx, run, problem, { retry: false });
      }
      if (isConditionFailed(error, 'execution-ended') && !endedAs) {
        // The run's output and tokens are kept on the stage; nothing after it starts. A stage of a
        // cancelled execution ends cancelled, one of a failed execution shows its success.
        const latest = await getExecutionItem({ orgId, pipelineId: execution.pipeline_id, id: execution.id });
        endedAs = latest?.status === 'cancelled' ? 'cancelled' : 'succeeded';
        continue;
      }
      if (isConditionFailed(error, 'stage-moved')) return 'ignored';
      throw error;
    }
  }
  if (endedAs) return endedAs === 'cancelled' ? 'cancelled' : 'ignored';
  for (const name of stage.dependents.slice(DEPENDENTS_IN_TRANSACTION)) await transact([countdown(run, name)]);
  await afterSuccess(ctx, run);
  return 'succeeded';
}

/**
 * What follows a stage's success: its ready dependents queued, the execution completed if it was the
 * last. Both are conditional, so running them again is harmless: a redelivered message of a succeeded
 * attempt runs them again (lib/pipelines/stage-run.ts), which finishes the work of a consumer that
 * stopped between the commit and here.
 */
export async function afterSuccess(ctx: RequestContext, run: StageRun, redelivered = false): Promise<void> {
  await startReadyDependents(ctx, run, redelivered);
  await completeIfDone(ctx, run);
}

/** Rounds of a success transaction cancelled by colliding ones (not by a condition). */
const HOT_ROUNDS = 8;

/**
 * Every success transaction writes the execution item (its counters), so stages finishing together
 * collide; `transact` retries a few times, this keeps trying longer with growing random pauses, since
 * a success given up on would leave its stage running.
 */
async function transactHot(writes: TransactItem[]): Promise<void> {
  for (let round = 1; ; round += 1) {
    try {
      await transact(writes);
      return;
    } catch (error) {
      if (!(error instanceof ConflictError) || isConditionFailed(error) || round >= HOT_ROUNDS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 25 * round));
    }
  }
}

/**
 * The debit of a stage's tokens, conditional on the balance covering it rather than on the exact balance
 * read: stages finishing side by side then never refuse each other's debits (the entries record
 * `balance_after: null`, as the ledger does for such debits).
 */
function debitWrites(run: StageRun, tokens: number, now: Date): TransactItem[] {
  if (tokens <= 0) return [];
  return ledgerWrites({
    orgId: run.orgId,
    type: 'consume',
    amount: -tokens,
    action: 'pipeline_stage',
    referenceId: `pipeline-${run.execution.id}-${run.stage.name}`,
    metadata: { pipeline_id: run.execution.pipeline_id, execution_id: run.execution.id, stage: run.stage.name },
    actor: `pipeline:${run.execution.pipeline_id}`,
    now,
  }).writes;
}

/** The execution's counters raised by a stage: only while it is running when `whileRunning`. */
const executionAdd = (
  orgId: string,
  execution: ExecutionItem,
  tokens: number,
  options: { counted: boolean; whileRunning: boolean },
): TransactItem => ({
  Update: {
    Key: executionKeys.byId(orgId, execution.pipeline_id, execution.id),
    UpdateExpression: 'ADD stages_succeeded :one, tokens_used :tokens',
    ...(options.whileRunning
      ? { ConditionExpression: '#status = :running', ExpressionAttributeNames: { '#status': 'status' } }
      : {}),
    ExpressionAttributeValues: {
      ':one': options.counted ? 1 : 0,
      ':tokens': tokens,
      ...(options.whileRunning ? { ':running': 'running' } : {}),
    },
  },
  reason: 'execution-ended',
});

const countdown = (run: StageRun, name: string): TransactItem => ({
  Update: {
    Key: executionKeys.stage(run.orgId, run.execution.id, name),
    UpdateExpression: 'ADD remaining :minus',
    ExpressionAttributeValues: { ':minus': -1 },
  },
});

/**
 * Each dependent now at `remaining` 0 is queued by the one conditional update that lands, and sent: the
 * updates are tried without reading the dependents first, since a refused one costs what a read would.
 * When this message is a redelivery (its first processing failed, perhaps while sending), the dependents
 * are read, and those queued but never started are sent again too: their claim lets only one message
 * run them.
 */
async function startReadyDependents(ctx: RequestContext, run: StageRun, redelivered: boolean): Promise<void> {
  if (run.stage.dependents.length === 0) return;
  if (redelivered) {
    const dependents = await stagesNamed(run.orgId, run.execution.id, run.stage.dependents);
    await Promise.all(
      dependents
        .filter((item) => item.status === 'queued' && item.attempts === 0)
        .map((item) => sendStage(ctx, stageMessage(run.message, item))),
    );
  }
  const at = ctx.ports.clock.now().toISOString();
  await Promise.all(
    run.stage.dependents.map(async (name) => {
      const queued = await queueIfReady(run.orgId, { execution_id: run.execution.id, name }, at);
      if (queued) await sendStage(ctx, stageMessage(run.message, queued));
    }),
  );
}

/** The first attempt's message of `stage`, in the execution `of` names. */
const stageMessage = (of: Omit<StageMessage, 'stage' | 'attempt'>, stage: StageItem): StageMessage => ({
  org_id: of.org_id,
  pipeline_id: of.pipeline_id,
  execution_id: of.execution_id,
  stage: stage.name,
  attempt: 1,
  agent: stage.agent,
});

/**
 * A pending stage whose dependencies have all succeeded (`remaining` 0) queued and sent: only the one
 * conditional `pending → queued` that lands sends, so of all who see it ready one enqueues it.
 */
export async function queueReadyStage(
  ctx: RequestContext,
  message: Omit<StageMessage, 'stage' | 'attempt'>,
  item: StageItem,
): Promise<boolean> {
  if (item.status !== 'pending' || item.remaining > 0) return false;
  const queued_at = ctx.ports.clock.now().toISOString();
  if (!(await tryUpdate(stageUpdate(message.org_id, item, ['pending'], { status: 'queued', queued_at })))) {
    return false;
  }
  await sendStage(ctx, stageMessage(message, item));
  return true;
}

/**
 * The execution and its stages as events carry them: without the stages' outputs, to stay small.
 * `ending` is a stage whose change lands in the same transaction as the event, shown as it will be; a
 * failing execution shows its stages not started as `skipped`, which they become right after.
 */
async function eventData(
  orgId: string,
  execution: ExecutionItem,
  ending?: Partial<StageItem> & { name: string },
): Promise<Record<string, unknown>> {
  const skipping = execution.status === 'failed';
  const stages = (await stageItems(orgId, execution.id)).map((item): StageItem => {
    if (item.name === ending?.name) return { ...item, ...ending };
    if (skipping && (item.status === 'pending' || item.status === 'queued')) return { ...item, status: 'skipped' };
    return item;
  });
  const record = toExecution(execution, stages);
  return {
    execution: {
      ...record,
      pipeline_name: execution.pipeline_name,
      stages: record.stages.map(({ output: _output, ...rest }) => rest),
    },
  };
}

/** Ends the execution with `to` (from running) and emits `type` with it; false when it had ended. */
async function endExecution(
  ctx: RequestContext,
  orgId: string,
  execution: ExecutionItem,
  to: 'succeeded' | 'failed',
  type: WebhookEvent,
  ending?: { write: TransactItem; stage: Partial<StageItem> & { name: string } },
): Promise<boolean> {
  const now = ctx.ports.clock.now();
  const ended: ExecutionItem = { ...execution, status: to, finished_at: now.toISOString() };
  // The event's data is read while its target is: an execution ending takes one round trip less.
  const event = await prepareEvent(orgId, type, eventData(orgId, ended, ending?.stage), now);
  try {
    await transact([
      executionUpdate(orgId, execution, ['running'], { status: to, finished_at: ended.finished_at }),
      ...(ending ? [ending.write] : []),
      ...(event ? [event.write] : []),
      ...executionEndWrites(orgId, ended, to, now),
    ]);
  } catch (error) {
    if (!isConditionFailed(error, 'execution-ended')) throw error;
    return false;
  }
  if (event) await queuePrepared(ctx, event);
  return true;
}

/** Only a stage without dependents can be the last to succeed, so only such a stage reads the execution. */
async function completeIfDone(ctx: RequestContext, run: StageRun): Promise<void> {
  if (run.stage.dependents.length > 0) return;
  const latest = await getExecutionItem({
    orgId: run.orgId,
    pipelineId: run.execution.pipeline_id,
    id: run.execution.id,
  });
  if (latest) await completeExecution(ctx, run.orgId, latest);
}

/** A running execution whose stages have all succeeded ends `succeeded` (once); true when this call ended it. */
export async function completeExecution(ctx: RequestContext, orgId: string, latest: ExecutionItem): Promise<boolean> {
  if (latest.status !== 'running' || latest.stages_succeeded < latest.stages_total) return false;
  return await endExecution(ctx, orgId, latest, 'succeeded', 'pipeline_completed');
}

/**
 * A failed attempt: sent again after its delay while attempts remain and `retry` allows, else the stage
 * and the execution fail and the stages not started are skipped.
 */
export async function stageFailed(
  ctx: RequestContext,
  run: StageRun,
  error: string,
  options: { retry: boolean; retryDelaysSeconds?: number[] },
): Promise<StageOutcome> {
  const { orgId, stage, message } = run;
  const at = ctx.ports.clock.now().toISOString();
  if (options.retry && message.attempt < MAX_STAGE_ATTEMPTS) {
    const delays = options.retryDelaysSeconds ?? STAGE_RETRY_DELAYS_SECONDS;
    const back = stageUpdate(orgId, stage, ['running'], { status: 'queued', error, queued_at: at }, message.attempt);
    if (!(await tryUpdate(back))) return 'ignored';
    const delay = delays[message.attempt - 1] ?? delays.at(-1) ?? 0;
    await sendStage(ctx, { ...message, attempt: message.attempt + 1 }, delay);
    return 'retrying';
  }
  const failedStage = { status: 'failed' as const, error, finished_at: at, attempts: message.attempt };
  const stageFail = stageUpdate(orgId, stage, ['running'], failedStage, message.attempt);
  const latest =
    (await getExecutionItem({ orgId, pipelineId: stage.pipeline_id, id: stage.execution_id })) ?? run.execution;
  try {
    const ended =
      latest.status === 'running' &&
      (await endExecution(ctx, orgId, latest, 'failed', 'pipeline_failed', {
        write: stageFail,
        stage: { name: stage.name, ...failedStage },
      }));
    if (!ended) await transact([stageFail]);
  } catch (failure) {
    if (!isConditionFailed(failure, 'stage-moved')) throw failure;
    return 'ignored';
  }
  const skipped = await moveStages(
    orgId,
    await stageItems(orgId, stage.execution_id),
    ['pending', 'queued'],
    'skipped',
    at,
  );
  logger.info('pipeline stage failed', { orgId, executionId: stage.execution_id, stage: stage.name, error, skipped });
  return 'failed';
}
