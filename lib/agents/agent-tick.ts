import { randomUUID } from 'node:crypto';
import type { AgentItem } from '#lib/agents/agent-keys';
import { getAgentById, releaseLease, runningTaskWrite, takeLease } from '#lib/agents/agent-records';
import { recordAgentState, unlessHalted } from '#lib/agents/agent-state';
import { checkAgent, nextTaskFor, type SkipReason } from '#lib/agents/idle-check';
import { agentActor, fail, MAX_RUN_ATTEMPTS, type RunEnd, succeed, taskRun } from '#lib/agents/run-results';
import { config } from '#lib/config';
import { readCredentialValue } from '#lib/credentials/store';
import { AgentRunError, ConflictError, isConditionFailed } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import type { RunnerConnection } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { logWrite } from '#lib/logs/log-records';
import { assigneeKey, type Task, toTask } from '#lib/tasks/task-keys';
import { getTaskItem } from '#lib/tasks/task-records';
import { updateTaskAs } from '#lib/tasks/task-update';
import { TargetRefusedError, vetTarget, webhookUrlProblem } from '#lib/webhooks/outbound/targets';

/**
 * One tick of an agent (functions/schedule/agent-tick), started by its schedule:
 *
 * 1. takes the agent's lease, so that a tick still running makes the next one skip (`busy`);
 * 2. skips when the idle check says so (stopped, budget or balance exhausted, no runnable task);
 * 3. claims its highest-priority runnable todo task: todo → in_progress, conditional on the task still
 *    being todo, so two ticks never take the same task;
 * 4. runs it through the AgentRunner port with the agent's identity, rules and the task;
 * 5. in one transaction: the task moves to review (done with `config.complete_to: 'done'`) with the
 *    run's output and usage, the tokens are consumed from the balance, and the log, activity and
 *    changelog entries are written; then the agent's heartbeat, counters and budget use.
 *
 * A failed run puts the task back to todo with the error (blocked after MAX_RUN_ATTEMPTS failed runs,
 * so a task that cannot succeed does not fail every tick), shows the agent as `error` and emits
 * `agent_error`. Nothing is consumed for a failed run. A run the balance cannot pay when it ends
 * fails the same way (402 semantics: no retry). How runs end: lib/agents/run-results.ts.
 *
 * The claim also marks the task as running on the agent (`running_task_id`). A tick that finds the mark
 * (the previous one crashed or timed out mid-run, and its lease expired) puts that task back to todo
 * first, so interrupted work runs again.
 */

export interface TickEvent {
  org_id: string;
  agent_id: number;
}

export type TickOutcome = { outcome: 'skipped'; reason: SkipReason | 'busy' | 'unknown_agent' } | RunEnd;

/** A tick holds its agent's lease this long at most: the runner's timeout for each of its three tries, and a minute. */
const leaseMs = () => config.agentRunTimeoutMs * 3 + 60_000;

export async function runAgentTick(ctx: RequestContext, event: TickEvent): Promise<TickOutcome> {
  const orgId = event.org_id;
  const agentId = event.agent_id;
  const holder = randomUUID();
  const leased = await takeLease({ orgId, agentId, holder, now: ctx.ports.clock.now().getTime(), ttlMs: leaseMs() });
  if (!leased) return { outcome: 'skipped', reason: 'busy' };
  try {
    return await tickHolding(ctx, orgId, agentId);
  } finally {
    await releaseLease({ orgId, agentId, holder });
  }
}

async function tickHolding(ctx: RequestContext, orgId: string, agentId: number): Promise<TickOutcome> {
  const now = ctx.ports.clock.now();
  const found = await getAgentById({ orgId, id: agentId, consistent: true });
  if (!found) {
    logger.warn('agent tick for an agent that does not exist', { orgId, agentId });
    return { outcome: 'skipped', reason: 'unknown_agent' };
  }
  const agent = found.running_task_id ? await recoverInterrupted(ctx, orgId, found) : found;
  const check = await checkAgent(orgId, agent, 'task', now);
  const task = check.task ? await claim(ctx, orgId, agent, check.task.id) : undefined;
  if (!task) {
    const reason = check.reason ?? 'no_task';
    await recordAgentState(
      orgId,
      agentId,
      () => ({ skip_reason: reason, last_heartbeat: now.toISOString() }),
      now,
      agent,
    );
    return { outcome: 'skipped', reason };
  }
  const working = await recordAgentState(
    orgId,
    agentId,
    (latest) => ({
      status: unlessHalted(latest, 'active'),
      current_task: `#${task.id} ${task.title}`,
      skip_reason: null,
      last_heartbeat: now.toISOString(),
    }),
    now,
  );
  const runAgent = working ?? agent;
  const startedAt = now.toISOString();
  const attempt = (task.last_run?.attempt ?? 0) + 1;
  try {
    const result = await ctx.ports.runner.run({
      orgId,
      agent: {
        name: runAgent.name,
        model: runAgent.model,
        identity: runAgent.identity ?? '',
        soul_content: runAgent.soul_content ?? '',
        core_rules: runAgent.core_rules ?? '',
        tools: runAgent.tools ?? [],
      },
      instructions: `Task #${task.id}: ${task.title}${task.description ? `\n\n${task.description}` : ''}`,
      input: { task: runInput(task) },
      maxTokens: maxTokensOf(runAgent),
      connection: ctx.ports.runner.kind === 'provider' ? await llmConnection(ctx, orgId) : undefined,
    });
    return await succeed(ctx, { orgId, agent: runAgent, task, result, attempt, startedAt });
  } catch (error) {
    if (!(error instanceof AgentRunError)) {
      logger.error('agent run failed unexpectedly', { orgId, agentId, taskId: task.id, error: error as Error });
    }
    const message = error instanceof AgentRunError ? error.message : 'The run failed unexpectedly';
    return await fail(ctx, { orgId, agent: runAgent, task, attempt, startedAt, error: message });
  }
}

/** Claims the task (todo → in_progress, assigned to the agent); on losing the race, the next candidate. */
async function claim(ctx: RequestContext, orgId: string, agent: AgentItem, firstId: number): Promise<Task | undefined> {
  let candidate: number | undefined = firstId;
  for (let round = 0; round < 3 && candidate !== undefined; round += 1) {
    try {
      const at = ctx.ports.clock.now().toISOString();
      return await updateTaskAs(
        ctx,
        agentActor(orgId, agent),
        candidate,
        { status: 'in_progress', assignee: agent.name },
        {
          expectStatus: 'todo',
          action: 'task.claimed',
          alsoWrite: [runningTaskWrite({ orgId, agentId: agent.id, taskId: candidate, at })],
        },
      );
    } catch (error) {
      if (!isConditionFailed(error, 'status-changed') && !(error instanceof ConflictError)) throw error;
      candidate = (await nextTaskFor(orgId, agent))?.id;
    }
  }
  return undefined;
}

const runInput = (task: Task) => ({
  id: task.id,
  title: task.title,
  description: task.description,
  priority: task.priority,
  product: task.product,
  category: task.category,
  tags: task.tags,
  due_date: task.due_date,
});

function maxTokensOf(agent: AgentItem): number | undefined {
  const cap = agent.config?.max_tokens;
  return typeof cap === 'number' && Number.isInteger(cap) && cap > 0 ? cap : undefined;
}

/**
 * The organization's LLM integration (base URL, key, default model), when it is configured. Its base
 * URL is held to the rules of outbound webhook URLs (https, no private or loopback address unless the
 * deployment allows them), since the service calls it from inside its network. The URL may have been
 * stored through the credentials API, which does not read it as a URL, and a name may resolve to a
 * private address whatever it looked like when stored: so it is judged here, before every call, by
 * what its host resolves to now, and the call is made to the address that was judged.
 */
export async function llmConnection(ctx: RequestContext, orgId: string): Promise<RunnerConnection | undefined> {
  const [baseUrl, apiKey, model] = await Promise.all(
    ['base_url', 'api_key', 'default_model'].map((field) =>
      readCredentialValue(ctx, orgId, `integration.llm.${field}`),
    ),
  );
  if (!baseUrl || !apiKey) return undefined;
  const allowPrivateTargets = config.allowPrivateWebhookTargets;
  const problem = webhookUrlProblem(baseUrl, { allowPrivateTargets });
  if (problem) throw new AgentRunError(`The llm integration's base_url ${problem}`, { retryable: false });
  const address = allowPrivateTargets ? undefined : await vetResolvedHost(ctx, new URL(baseUrl));
  return { baseUrl, apiKey, ...(model ? { model } : {}), ...(address ? { address } : {}) };
}

/**
 * Refuses a base URL whose host resolves to any address outside the public Internet; answers the address
 * the call is then pinned to, so that a second resolution cannot bring it elsewhere.
 */
async function vetResolvedHost(ctx: RequestContext, url: URL): Promise<{ address: string; family: 4 | 6 }> {
  try {
    return await vetTarget(url, { allowPrivateTargets: false, lookup: (host) => ctx.ports.resolver.lookup(host) });
  } catch (error) {
    if (error instanceof TargetRefusedError) {
      const reason = error.message.replace(/^Refused: /, '');
      throw new AgentRunError(`The llm integration's base_url is refused: ${reason}`, { retryable: false });
    }
    // A name that does not resolve now may later: the run is tried again, as for a provider outage.
    throw new AgentRunError(`The llm integration's host ${url.hostname} could not be resolved`, { retryable: true });
  }
}

/**
 * The previous tick claimed a task and stopped before finishing it (a crash, a timeout): its lease has
 * expired, since this tick holds it. The task, if still in progress with the agent, goes back to todo
 * (blocked after MAX_RUN_ATTEMPTS) with the interruption as its last run, so this tick or a later one
 * runs it again; nothing was consumed for it.
 */
async function recoverInterrupted(ctx: RequestContext, orgId: string, agent: AgentItem): Promise<AgentItem> {
  const taskId = agent.running_task_id as number;
  const now = ctx.ports.clock.now();
  const task = await getTaskItem({ orgId, id: taskId, consistent: true });
  if (task && task.status === 'in_progress' && assigneeKey(task.assignee ?? null) === agent.name) {
    const attempt = (task.last_run?.attempt ?? 0) + 1;
    const error = 'The run was interrupted: the tick running it stopped before it finished';
    const status = attempt >= MAX_RUN_ATTEMPTS ? 'blocked' : 'todo';
    const line = logWrite(
      orgId,
      {
        agent: agent.name,
        level: 'warn',
        message: `Task #${taskId}: ${error}; back to ${status}`,
        meta: { task_id: taskId },
      },
      now,
    );
    const startedAt = task.last_run?.started_at ?? task.updated_at;
    await updateTaskAs(
      ctx,
      agentActor(orgId, agent),
      taskId,
      { status },
      {
        expectStatus: 'in_progress',
        lastRun: taskRun({ orgId, agent, task: toTask(task), attempt, startedAt }, now, { status: 'failed', error }),
        alsoWrite: [line],
        action: 'task.run_interrupted',
      },
    ).catch((failure: unknown) => {
      if (!isConditionFailed(failure, 'status-changed')) throw failure;
    });
  }
  const recovered = await recordAgentState(
    orgId,
    agent.id,
    (latest) =>
      latest.running_task_id === taskId
        ? { running_task_id: null, current_task: null, status: unlessHalted(latest, 'idle') }
        : undefined,
    now,
  );
  return recovered ?? agent;
}
