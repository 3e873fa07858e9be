import * as z from 'zod';
import { getAgentByName } from '#lib/agents/agent-records';
import { llmConnection } from '#lib/agents/agent-tick';
import { type TransactItem, transact } from '#lib/db/transactions';
import { AgentRunError, isConditionFailed, OrphanMessageError } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import type { AgentProfile, AgentRunResult } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import type { ExecutionItem, StageItem, StageMessage as StageMessageBody } from '#lib/pipelines/execution-keys';
import {
  claimStage,
  executionUnchanged,
  getExecutionItem,
  getStageItem,
  stagesNamed,
  stageUpdate,
} from '#lib/pipelines/execution-records';
import { sendStage } from '#lib/pipelines/executions';
import { stageTimeoutSec } from '#lib/pipelines/pipeline-keys';
import { referencesIn } from '#lib/pipelines/pipeline-variables';
import {
  afterSuccess,
  type StageOutcome,
  type StageRun,
  stageFailed,
  stageSucceeded,
} from '#lib/pipelines/stage-finish';
import { resolveVariables } from '#lib/pipelines/stage-variables';
import { builtInBySlug } from '#lib/templates/built-in-templates';
import { getTemplateItemBySlug } from '#lib/templates/template-records';

/**
 * One message of the stage queue (functions/queue/pipeline-stage): one attempt of one stage.
 *
 * The attempt is claimed first: `queued → running` on condition that the stage is queued and has
 * started `attempt - 1` attempts. A message whose claim is refused (a duplicate, a redelivery, an
 * attempt already superseded; the stage running, succeeded, failed, skipped or cancelled) is
 * acknowledged and runs nothing, so at-least-once delivery runs each attempt at most once (a message
 * of an attempt that succeeded does again what follows a success, conditional throughout). A message
 * for a cancelled execution cancels its stage (if not started) and stops; one for a failed execution
 * skips it (if not started) and stops; a claim that landed on such an execution is undone that way.
 *
 * The claimed stage's config has its variables filled in (lib/pipelines/stage-variables.ts) from the
 * inputs, its succeeded ancestors' outputs and the built-ins, and its agent is run through the runner
 * port, raced against the stage's timeout (a timeout is a failed attempt). How it ends:
 * lib/pipelines/stage-finish.ts.
 */

export const StageMessage = z.object({
  org_id: z.string().min(1).max(64),
  pipeline_id: z.number().int().positive(),
  execution_id: z.number().int().positive(),
  stage: z.string().min(1).max(64),
  attempt: z.number().int().min(1).max(100),
  agent: z.string().min(1).max(128).optional(),
});

export interface StagePolicy {
  /** Seconds before each attempt after the first (the last repeats). */
  retryDelaysSeconds?: number[];
  /** A stage's time limit in ms; its `config.timeout_sec` by default. */
  timeoutMsOf?: (stage: StageItem) => number;
  /**
   * Epoch ms by which a run must end whatever its stage's limit: the invocation's end less the time to
   * write the outcome (a run cut short by it is a failed attempt, retried, not an invocation killed).
   */
  deadline?: number;
}

/** An agent or template the stage names that is gone: the stage fails without retrying. */
class UnknownAgentError extends Error {}

async function profileOf(orgId: string, name: string): Promise<AgentProfile> {
  const agent = await getAgentByName({ orgId, name, consistent: true });
  if (agent) {
    return {
      name: agent.name,
      model: agent.model,
      identity: agent.identity ?? '',
      soul_content: agent.soul_content ?? '',
      core_rules: agent.core_rules ?? '',
      tools: agent.tools ?? [],
    };
  }
  const template = builtInBySlug(name) ?? (await getTemplateItemBySlug({ orgId, slug: name }));
  if (!template || ('status' in template && template.status !== 'active')) {
    throw new UnknownAgentError(`The stage's agent ${name} is neither an agent nor an active template`);
  }
  return {
    name: template.slug,
    model: template.model,
    identity: template.identity,
    soul_content: template.soul_content,
    core_rules: template.core_rules,
    tools: template.tools,
  };
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AgentRunError(`The stage ran longer than its ${ms / 1000} s limit`, { retryable: true })),
      ms,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The stages whose outputs a config refers to (`{{plan.summary}}` names `plan`). */
function referencedStages(config: Record<string, unknown>): string[] {
  const names = referencesIn(config, 'config').flatMap((found) =>
    found.reference?.kind === 'stage' ? [found.reference.stage] : [],
  );
  return [...new Set(names)];
}

/**
 * `redelivered`: the queue delivers this message again because its processing failed before (SQS's
 * receive count above 1); what that processing may have left unsent is sent again.
 *
 * The claim is written first, side by side with the execution's read and the agent's lookup (when the
 * message names it): a stage's start costs one round trip, plus one when its config refers to other
 * stages' outputs. A claim that lands on an execution found ended gives the stage up at once.
 */
export async function processStageMessage(
  ctx: RequestContext,
  message: StageMessageBody,
  policy: StagePolicy = {},
  redelivered = false,
): Promise<StageOutcome> {
  const orgId = message.org_id;
  const at = ctx.ports.clock.now().toISOString();
  const hinted = message.agent === undefined ? undefined : lookUp(profileOf(orgId, message.agent));
  const [execution, claimed] = await Promise.all([
    getExecutionItem({ orgId, pipelineId: message.pipeline_id, id: message.execution_id }),
    claimStage(orgId, { execution_id: message.execution_id, name: message.stage }, message.attempt, at),
  ]);
  if (!claimed) return await notClaimed(ctx, message, execution, policy, redelivered);
  if (execution?.status !== 'running') {
    // Ended (cancelled, or failed by another stage) while this message waited: the attempt never starts,
    // unless a rerun has set the execution running again since it was read.
    const to = execution?.status === 'cancelled' ? 'cancelled' : 'skipped';
    const undo = { status: to, finished_at: at, started_at: null, attempts: message.attempt - 1 } as const;
    const undone = await whileEnded(orgId, execution, stageUpdate(orgId, claimed, ['running'], undo, message.attempt));
    if (undone !== 'execution-moved') return to === 'cancelled' ? 'cancelled' : 'ignored';
    const latest = await getExecutionItem({ orgId, pipelineId: message.pipeline_id, id: message.execution_id });
    if (latest?.status !== 'running') return 'ignored';
    return await runClaimed(ctx, { orgId, execution: latest, stage: claimed, message }, hinted, policy, at);
  }
  return await runClaimed(ctx, { orgId, execution, stage: claimed, message }, hinted, policy, at);
}

/**
 * `write` on condition that the execution is still as read (when it exists): what lands, or why not.
 * A stage message acts so on an ended execution; a rerun that has set it running since refuses it.
 */
async function whileEnded(
  orgId: string,
  execution: ExecutionItem | undefined,
  write: TransactItem,
): Promise<'done' | 'stage-moved' | 'execution-moved'> {
  try {
    await transact(execution ? [write, executionUnchanged(orgId, execution)] : [write]);
    return 'done';
  } catch (error) {
    if (isConditionFailed(error, 'execution-moved')) return 'execution-moved';
    if (isConditionFailed(error)) return 'stage-moved';
    throw error;
  }
}

/** The claimed attempt run: variables filled in, the agent run against the time limit, the outcome written. */
async function runClaimed(
  ctx: RequestContext,
  run: StageRun,
  hinted: Promise<AgentProfile> | undefined,
  policy: StagePolicy,
  at: string,
): Promise<StageOutcome> {
  const { orgId, execution, stage: claimed, message } = run;
  let result: AgentRunResult;
  try {
    const profile = claimed.agent === message.agent && hinted ? hinted : lookUp(profileOf(orgId, claimed.agent));
    const ancestors = await stagesNamed(orgId, execution.id, referencedStages(claimed.config));
    const outputs = Object.fromEntries(
      ancestors.filter((item) => item.status === 'succeeded').map((item) => [item.name, item.output]),
    );
    const inputs = execution.inputs ?? {};
    const config = resolveVariables(claimed.config, {
      inputs,
      outputs,
      builtIns: {
        execution_id: execution.id,
        pipeline_id: execution.pipeline_id,
        pipeline_name: execution.pipeline_name,
        stage_name: claimed.name,
        now: at,
        task_id: inputs.task_id ?? '',
      },
    }) as Record<string, unknown>;
    const instructions = [config.prompt, config.instructions].find((value) => typeof value === 'string');
    const maxTokens = typeof config.max_tokens === 'number' ? config.max_tokens : undefined;
    const agent = await profile;
    const limitMs = policy.timeoutMsOf?.(claimed) ?? stageTimeoutSec(claimed) * 1000;
    const timeoutMs = Math.max(0, Math.min(limitMs, (policy.deadline ?? Number.POSITIVE_INFINITY) - Date.now()));
    result = await withTimeout(
      (async () =>
        ctx.ports.runner.run({
          orgId,
          agent,
          instructions: (instructions as string | undefined) ?? claimed.name,
          input: { ...config, inputs },
          ...(maxTokens !== undefined ? { maxTokens } : {}),
          connection: ctx.ports.runner.kind === 'provider' ? await llmConnection(ctx, orgId) : undefined,
        }))(),
      timeoutMs,
    );
  } catch (error) {
    if (!(error instanceof AgentRunError) && !(error instanceof UnknownAgentError)) {
      logger.error('pipeline stage run failed unexpectedly', { ...message, error: error as Error });
    }
    const known = error instanceof AgentRunError || error instanceof UnknownAgentError;
    const reason = known ? (error as Error).message : 'The run failed unexpectedly';
    // A run the runner says would fail the same way again (a refused request, no provider) is not retried.
    return await stageFailed(ctx, run, reason, {
      retry: error instanceof AgentRunError ? error.retryable : !(error instanceof UnknownAgentError),
      ...(policy.retryDelaysSeconds ? { retryDelaysSeconds: policy.retryDelaysSeconds } : {}),
    });
  }
  return await stageSucceeded(ctx, run, result);
}

/** A lookup started ahead of its use; its failure is seen where it is awaited, not as an unhandled one. */
function lookUp<T>(work: Promise<T>): Promise<T> {
  work.catch(() => undefined);
  return work;
}

/**
 * A message whose claim was refused: a duplicate, a redelivery, an attempt superseded, or a stage of an
 * execution that ended. A stage not started of an ended execution is cancelled or skipped; a succeeded
 * attempt's message does again what follows a success; a redelivered attempt that failed and was put
 * back sends the next attempt's message, which its first processing may never have sent.
 */
async function notClaimed(
  ctx: RequestContext,
  message: StageMessageBody,
  execution: ExecutionItem | undefined,
  policy: StagePolicy,
  redelivered: boolean,
): Promise<StageOutcome> {
  const orgId = message.org_id;
  const stage = await getStageItem(orgId, message.execution_id, message.stage);
  if (!execution || !stage) {
    throw new OrphanMessageError(
      `Stage ${message.stage} of execution ${message.execution_id} (pipeline ${message.pipeline_id}) does not exist`,
    );
  }
  const at = ctx.ports.clock.now().toISOString();
  if (execution.status === 'cancelled' || execution.status === 'failed') {
    const to = execution.status === 'cancelled' ? 'cancelled' : 'skipped';
    if (stage.status === 'pending' || stage.status === 'queued') {
      await whileEnded(orgId, execution, stageUpdate(orgId, stage, [stage.status], { status: to, finished_at: at }));
    }
    return to === 'cancelled' ? 'cancelled' : 'ignored';
  }
  if (execution.status !== 'running') return 'ignored';
  if (stage.status === 'succeeded' && stage.attempts === message.attempt) {
    await afterSuccess(ctx, { orgId, execution, stage, message }, redelivered);
  } else if (redelivered && stage.status === 'queued' && stage.attempts === message.attempt) {
    await sendStage(ctx, { ...message, attempt: message.attempt + 1 }, policy.retryDelaysSeconds?.[0] ?? 0);
  }
  return 'ignored';
}
