import { llmConnection } from '#lib/agents/agent-tick';
import type { EngineItem } from '#lib/discovery/engine-keys';
import { getEngine } from '#lib/discovery/engine-records';
import { failRun, type RunOutcome, succeedRun } from '#lib/discovery/run-finish';
import type { RunItem } from '#lib/discovery/run-keys';
import { claimRun, getRun } from '#lib/discovery/run-records';
import { AgentRunError, OrphanMessageError } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import type { AgentRunRequest, AgentRunResult } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { getBalance } from '#lib/tokens/ledger';

/**
 * One discovery run, executed (by the queue consumer for runs asked for, or inline by the schedule's
 * target, functions/queue/discovery-run.ts and functions/schedule/discovery-run.ts):
 *
 * 1. claims the run (`queued` → `running`), so that a message delivered twice runs the model once;
 * 2. fails it at once when its engine is gone, or when the organization's balance is empty (no model is
 *    called for a run nothing could pay for);
 * 3. runs the engine through the AgentRunner port: the engine's model, its layer and description as the
 *    work, and rules that ask for `{ summary, findings: [...] }`;
 * 4. ends it (lib/discovery/run-finish.ts): succeeded with its tokens debited, or failed with why.
 */

export interface RunRef {
  orgId: string;
  engineId: number;
  runId: number;
}

const IDENTITY =
  'You are a discovery engine. You look at one layer of the organization’s world and report what is new ' +
  'and worth acting on: opportunities, risks, changes. You never invent facts.';

const RULES = [
  'Answer with a JSON object { "summary": string, "findings": [{ "title": string, "detail": string }] }.',
  'Report only findings someone could act on; an empty findings list is a valid answer.',
  'Keep each detail under 500 characters.',
].join('\n');

export function runRequest(orgId: string, engine: EngineItem, run: RunItem): AgentRunRequest {
  return {
    orgId,
    agent: {
      name: `discovery-${engine.slug}`,
      model: engine.model,
      identity: IDENTITY,
      soul_content: engine.description ?? '',
      core_rules: RULES,
      tools: [],
    },
    instructions:
      `Discovery run #${run.id} of ${engine.name} in the layer ${engine.layer}` +
      (engine.description ? `\n\n${engine.description}` : ''),
    input: {
      engine: { slug: engine.slug, name: engine.name, layer: engine.layer, description: engine.description },
      run: { id: run.id, trigger: run.trigger },
    },
  };
}

export async function executeRun(ctx: RequestContext, ref: RunRef): Promise<RunOutcome> {
  const { orgId } = ref;
  const run = await claimRun({ ...ref, at: ctx.ports.clock.now().toISOString() });
  if (!run) {
    // A refused claim is a repeat of a run already taken, unless there is no such run at all.
    if (!(await getRun({ ...ref, consistent: true }))) {
      throw new OrphanMessageError(`Discovery run ${ref.runId} of engine ${ref.engineId} does not exist`);
    }
    return { outcome: 'skipped', run_id: ref.runId, reason: 'not_queued' };
  }
  const engine = await getEngine({ orgId, slug: run.engine_slug, consistent: true });
  if (!engine || engine.id !== run.engine_id) {
    return failRun(ctx, orgId, run, 'The discovery engine was deleted before the run started');
  }
  const { balance } = await getBalance(orgId);
  if (balance <= 0) return failRun(ctx, orgId, run, `The token balance (${balance}) cannot pay for a run`);
  let result: AgentRunResult;
  try {
    const request = runRequest(orgId, engine, run);
    const connection = ctx.ports.runner.kind === 'provider' ? await llmConnection(ctx, orgId) : undefined;
    result = await ctx.ports.runner.run({ ...request, ...(connection ? { connection } : {}) });
  } catch (error) {
    if (!(error instanceof AgentRunError)) {
      logger.error('discovery run failed unexpectedly', {
        orgId,
        engine: run.engine_slug,
        runId: run.id,
        error: error as Error,
      });
    }
    const message = error instanceof AgentRunError ? error.message : 'The run failed unexpectedly';
    return failRun(ctx, orgId, run, message);
  }
  return succeedRun(ctx, orgId, run, result);
}
