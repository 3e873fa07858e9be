import { activityActor } from '#lib/activity/activity-log';
import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, NotFoundError, PaymentRequiredError, ValidationError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import {
  DEFAULT_STAGE_TOKEN_ESTIMATE,
  type Execution,
  type ExecutionItem,
  executionKeys,
  FINISHED_EXECUTION,
  type StageItem,
  type StageMessage,
  toExecution,
} from '#lib/pipelines/execution-keys';
import { executionEndWrites, executionStartWrites } from '#lib/pipelines/execution-metrics';
import {
  executionPage,
  executionUpdate,
  getExecutionItem,
  moveStages,
  newExecutionTransactions,
  nextExecutionId,
  stageItems,
} from '#lib/pipelines/execution-records';
import type { PipelineItem, Stage } from '#lib/pipelines/pipeline-keys';
import { pipelineNotFound } from '#lib/pipelines/pipeline-queries';
import { getPipelineItem } from '#lib/pipelines/pipeline-records';
import { referencedInputs } from '#lib/pipelines/pipeline-variables';
import { getBalance } from '#lib/tokens/ledger';

/**
 * Starting, reading and cancelling pipeline executions. How a started execution runs stage by stage:
 * lib/pipelines/stage-run.ts.
 */

export const executionNotFound = () => new NotFoundError('Execution not found');

/** A stage's share of an execution's (or a rerun's) estimate: its `config.max_tokens`, else the default. */
export const stageEstimate = (stage: Pick<Stage, 'config'>) =>
  typeof stage.config.max_tokens === 'number' ? stage.config.max_tokens : DEFAULT_STAGE_TOKEN_ESTIMATE;

/** Sends one attempt of a stage to the stage queue. */
export async function sendStage(ctx: RequestContext, message: StageMessage, delaySeconds = 0): Promise<void> {
  await ctx.ports.queue.send('pipeline-stage', message, delaySeconds > 0 ? { delaySeconds } : undefined);
}

/**
 * POST /agent-pipelines/{id}/execute. Refused before anything is written when the stages reference
 * inputs the call lacks or the balance is below the estimate (`newExecution`).
 *
 * The stages are written before the execution (lib/pipelines/execution-records.ts), the root stages
 * already `queued`: only this request sends their messages, so each is enqueued once without a
 * further conditional update. The execution item lands with its activity entry and counters
 * (lib/pipelines/execution-metrics.ts).
 */
export async function executePipeline(
  ctx: RequestContext,
  pipelineId: number,
  inputs: Record<string, unknown>,
): Promise<Execution> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  // Read side by side: a request refused for its pipeline has read a balance it did not need.
  const [pipeline, { balance: available }] = await Promise.all([
    getPipelineItem({ orgId, id: pipelineId }),
    getBalance(orgId),
  ]);
  if (!pipeline) throw pipelineNotFound();
  const actor = activityActor(principal);
  const created = await newExecution(ctx, { orgId, pipeline, inputs, createdBy: actor.actor_id, balance: available });
  const started = executionStartWrites(orgId, created.execution, actor, ctx.ports.clock.now());
  const groups = newExecutionTransactions(created.execution, created.stages, started.length);
  groups.at(-1)?.push(...started);
  for (const group of groups) await transact(group);
  await sendQueuedStages(ctx, orgId, created);
  return toExecution(created.execution, created.stages);
}

/** An execution not yet written: its item and its stages' items (written by `newExecutionTransactions`). */
export interface NewExecution {
  execution: ExecutionItem;
  stages: StageItem[];
}

/**
 * A new `running` execution of `pipeline` with `inputs`, under the organization's next execution id,
 * as items to write. Refused when the stages reference inputs that `inputs` lacks (ValidationError, one
 * detail per input; inputs no stage references are kept and otherwise unused) or when the balance is
 * below the estimate (PaymentRequiredError, `needed` and `available`): the sum over stages of
 * `config.max_tokens`, or DEFAULT_STAGE_TOKEN_ESTIMATE each. Tokens are consumed per stage as each
 * succeeds, not reserved here.
 */
export async function newExecution(
  ctx: RequestContext,
  input: {
    orgId: string;
    pipeline: PipelineItem;
    inputs: Record<string, unknown>;
    createdBy: string;
    /** The balance when the caller has read it already. */
    balance?: number;
  },
): Promise<NewExecution> {
  const { orgId, pipeline, inputs } = input;
  const missing = referencedInputs(pipeline.stages).filter((field) => inputs[field] === undefined);
  if (missing.length > 0) {
    throw new ValidationError(
      'The pipeline’s stages reference inputs the request does not give',
      missing.map((field) => ({ path: `inputs.${field}`, message: 'is referenced by a stage and required' })),
    );
  }
  const needed = pipeline.stages.reduce((sum, stage) => sum + stageEstimate(stage), 0);
  const available = input.balance ?? (await getBalance(orgId)).balance;
  if (available < needed) {
    throw new PaymentRequiredError('The token balance is below the execution’s estimate', [
      {
        path: 'inputs',
        message: `needs an estimated ${needed} tokens, the balance has ${available}`,
        needed,
        available,
      },
    ]);
  }

  const id = await nextExecutionId(orgId);
  const at = ctx.ports.clock.now().toISOString();
  const execution: ExecutionItem = {
    ...executionKeys.byId(orgId, pipeline.id, id),
    id,
    pipeline_id: pipeline.id,
    pipeline_name: pipeline.name,
    version: pipeline.version,
    status: 'running',
    inputs,
    stages_total: pipeline.stages.length,
    stages_succeeded: 0,
    tokens_used: 0,
    started_at: at,
    finished_at: null,
    created_by: input.createdBy,
    counted: true,
    gsi1pk: executionKeys.runningPk,
    gsi1sk: executionKeys.runningSort(at, orgId, pipeline.id, id),
  };
  return { execution, stages: stageItemsOf(orgId, pipeline, id, at) };
}

/**
 * Sends the messages of the stages written `queued` (the root stages of a new execution, the ready
 * stages of a rerun) once the writes have landed. A message the queue refuses is sent again by the
 * reconciler (a stage queued for two minutes), so it is logged, not thrown: the execution has started
 * all the same.
 */
export async function sendQueuedStages(ctx: RequestContext, orgId: string, written: NewExecution): Promise<void> {
  const { execution } = written;
  await Promise.all(
    written.stages
      .filter((item) => item.status === 'queued')
      .map((stage) =>
        sendStage(ctx, {
          org_id: orgId,
          pipeline_id: execution.pipeline_id,
          execution_id: execution.id,
          stage: stage.name,
          attempt: 1,
          agent: stage.agent,
        }).catch((error: Error) =>
          logger.warn('queueing a pipeline stage failed; the reconciler will send it', {
            orgId,
            executionId: execution.id,
            stage: stage.name,
            error,
          }),
        ),
      ),
  );
}

function stageItemsOf(orgId: string, pipeline: PipelineItem, executionId: number, at: string): StageItem[] {
  const dependents = new Map<string, string[]>(pipeline.stages.map((stage) => [stage.name, []]));
  for (const stage of pipeline.stages) {
    for (const dependency of stage.depends_on) dependents.get(dependency)?.push(stage.name);
  }
  return pipeline.stages.map((stage) => ({
    ...executionKeys.stage(orgId, executionId, stage.name),
    execution_id: executionId,
    pipeline_id: pipeline.id,
    name: stage.name,
    agent: stage.agent,
    order: stage.order,
    depends_on: stage.depends_on,
    dependents: dependents.get(stage.name) ?? [],
    remaining: stage.depends_on.length,
    config: stage.config,
    status: stage.depends_on.length === 0 ? 'queued' : 'pending',
    attempts: 0,
    output: null,
    error: null,
    tokens_used: 0,
    started_at: null,
    finished_at: null,
    queued_at: stage.depends_on.length === 0 ? at : null,
  }));
}

async function requirePipeline(orgId: string, pipelineId: number): Promise<void> {
  if (!(await getPipelineItem({ orgId, id: pipelineId }))) throw pipelineNotFound();
}

/** GET /agent-pipelines/{id}/executions: newest first, each with its stages. */
export async function listExecutions(
  ctx: RequestContext,
  pipelineId: number,
  page: PageRequest,
): Promise<Page<Execution>> {
  const orgId = requirePrincipal(ctx).orgId;
  await requirePipeline(orgId, pipelineId);
  const found = await executionPage(orgId, pipelineId, page);
  const stages = await Promise.all(found.items.map((item) => stageItems(orgId, item.id)));
  return { items: found.items.map((item, at) => toExecution(item, stages[at] ?? [])), total: found.total };
}

/** GET /agent-pipelines/{id}/executions/{executionId}. */
export async function getExecution(ctx: RequestContext, pipelineId: number, id: number): Promise<Execution> {
  const orgId = requirePrincipal(ctx).orgId;
  const item = await getExecutionItem({ orgId, pipelineId, id });
  if (!item) throw executionNotFound();
  return toExecution(item, await stageItems(orgId, id));
}

/**
 * POST /agent-pipelines/{id}/executions/{executionId}/cancel: a queued or running execution becomes
 * `cancelled`, and so do its stages not started yet (pending, queued). A stage running at that moment
 * finishes its run; its result is kept on the stage, which ends `cancelled`, and no dependent starts.
 * An execution already finished is 409.
 */
export async function cancelExecution(ctx: RequestContext, pipelineId: number, id: number): Promise<Execution> {
  const orgId = requirePrincipal(ctx).orgId;
  const item = await getExecutionItem({ orgId, pipelineId, id });
  if (!item) throw executionNotFound();
  if (FINISHED_EXECUTION.has(item.status) || !(await cancelItem(ctx, orgId, item))) {
    const latest = (await getExecutionItem({ orgId, pipelineId, id })) ?? item;
    throw new ConflictError(`The execution has already ended (${latest.status})`);
  }
  return await getExecution(ctx, pipelineId, id);
}

/** Cancels the execution with its activity entry and counters; false when it had ended meanwhile. */
async function cancelItem(ctx: RequestContext, orgId: string, item: ExecutionItem): Promise<boolean> {
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  try {
    await transact([
      executionUpdate(orgId, item, ['queued', 'running'], { status: 'cancelled', finished_at: at }),
      ...executionEndWrites(orgId, item, 'cancelled', now, activityActor(requirePrincipal(ctx))),
    ]);
  } catch (error) {
    if (isConditionFailed(error, 'execution-ended')) return false;
    throw error;
  }
  await moveStages(orgId, await stageItems(orgId, item.id), ['pending', 'queued'], 'cancelled', at);
  return true;
}

/** Cancels every queued or running execution of a pipeline (its delete does this first); how many. */
export async function cancelActiveExecutions(ctx: RequestContext, orgId: string, pipelineId: number): Promise<number> {
  const active = await executionPage(orgId, pipelineId, { limit: Number.MAX_SAFE_INTEGER, offset: 0 }, (item) =>
    ['queued', 'running'].includes(item.status),
  );
  const cancelled = await Promise.all(active.items.map((item) => cancelItem(ctx, orgId, item)));
  return cancelled.filter(Boolean).length;
}
