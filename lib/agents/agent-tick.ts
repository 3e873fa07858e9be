import { randomUUID } from 'node:crypto';
import { withTokensUsed } from '#lib/agents/agent-budget';
import type { AgentItem } from '#lib/agents/agent-keys';
import { getAgentById, releaseLease, takeLease } from '#lib/agents/agent-records';
import { recordAgentState, unlessHalted } from '#lib/agents/agent-state';
import { checkAgent, nextTaskFor, type SkipReason } from '#lib/agents/idle-check';
import { changelogWrite } from '#lib/changelog/changelog';
import { config } from '#lib/config';
import { readCredentialValue } from '#lib/credentials/store';
import { type TransactItem, transact } from '#lib/db/transactions';
import { AgentRunError, ConflictError, isConditionFailed } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import type { AgentRunResult, RunnerConnection } from '#lib/kernel/ports';
import { logger } from '#lib/logger';
import { logWrite } from '#lib/logs/log-records';
import type { Task, TaskRun } from '#lib/tasks/task-keys';
import { type TaskActor, updateTaskAs } from '#lib/tasks/task-update';
import { getBalance, ledgerWrites } from '#lib/tokens/ledger';
import { prepareEvent, queuePrepared } from '#lib/webhooks/outbound/events';
import { webhookUrlProblem } from '#lib/webhooks/outbound/targets';

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
 * fails the same way (402 semantics: no retry).
 */

export interface TickEvent {
  org_id: string;
  agent_id: number;
}

export type TickOutcome =
  | { outcome: 'skipped'; reason: SkipReason | 'busy' | 'unknown_agent' }
  | { outcome: 'succeeded'; task_id: number; status: 'review' | 'done'; tokens: number }
  | { outcome: 'failed'; task_id: number; status: 'todo' | 'blocked'; error: string };

/** Failed runs of one task before it is set aside as blocked instead of todo. */
export const MAX_RUN_ATTEMPTS = 3;

/** A tick holds its agent's lease this long at most: the runner's timeout for each of its three tries, and a minute. */
const leaseMs = () => config.agentRunTimeoutMs * 3 + 60_000;

export async function runAgentTick(ctx: RequestContext, event: TickEvent): Promise<TickOutcome> {
  const orgId = event.org_id;
  const agentId = event.agent_id;
  const known = await getAgentById({ orgId, id: agentId, consistent: true });
  if (!known) {
    logger.warn('agent tick for an agent that does not exist', { orgId, agentId });
    return { outcome: 'skipped', reason: 'unknown_agent' };
  }
  const holder = randomUUID();
  const leased = await takeLease({ orgId, agentId, holder, now: ctx.ports.clock.now().getTime(), ttlMs: leaseMs() });
  if (!leased) return { outcome: 'skipped', reason: 'busy' };
  try {
    return await tickHolding(ctx, orgId, agentId);
  } finally {
    await releaseLease({ orgId, agentId, holder });
  }
}

const actorOf = (orgId: string, agent: AgentItem): TaskActor => ({
  orgId,
  activity: { actor_type: 'agent', actor_id: `agent:${agent.name}` },
});

async function tickHolding(ctx: RequestContext, orgId: string, agentId: number): Promise<TickOutcome> {
  const now = ctx.ports.clock.now();
  const agent = await getAgentById({ orgId, id: agentId, consistent: true });
  if (!agent) return { outcome: 'skipped', reason: 'unknown_agent' };
  const check = await checkAgent(orgId, agent, 'task', now);
  const task = check.task ? await claim(ctx, orgId, agent, check.task.id) : undefined;
  if (!task) {
    const reason = check.reason ?? 'no_task';
    await recordAgentState(orgId, agentId, () => ({ skip_reason: reason, last_heartbeat: now.toISOString() }), now);
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
      return await updateTaskAs(
        ctx,
        actorOf(orgId, agent),
        candidate,
        { status: 'in_progress', assignee: agent.name },
        { expectStatus: 'todo', action: 'task.claimed' },
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
 * deployment allows them), since the service calls it from inside its network.
 */
async function llmConnection(ctx: RequestContext, orgId: string): Promise<RunnerConnection | undefined> {
  const [baseUrl, apiKey, model] = await Promise.all(
    ['base_url', 'api_key', 'default_model'].map((field) =>
      readCredentialValue(ctx, orgId, `integration.llm.${field}`),
    ),
  );
  if (!baseUrl || !apiKey) return undefined;
  const problem = webhookUrlProblem(baseUrl, { allowPrivateTargets: config.allowPrivateWebhookTargets });
  if (problem) throw new AgentRunError(`The llm integration's base_url ${problem}`, { retryable: false });
  return { baseUrl, apiKey, ...(model ? { model } : {}) };
}

interface Finished {
  orgId: string;
  agent: AgentItem;
  task: Task;
  attempt: number;
  startedAt: string;
}

/** The run as the task keeps it. */
const taskRun = (run: Finished, now: Date, outcome: Partial<TaskRun> & Pick<TaskRun, 'status'>): TaskRun => ({
  agent: run.agent.name,
  attempt: run.attempt,
  output: null,
  usage: null,
  model: null,
  error: null,
  started_at: run.startedAt,
  finished_at: now.toISOString(),
  ...outcome,
});

/** Rounds of reading the balance again when another change moved it between the read and the debit. */
const DEBIT_ATTEMPTS = 20;

async function succeed(ctx: RequestContext, run: Finished & { result: AgentRunResult }): Promise<TickOutcome> {
  const { orgId, agent, task, result } = run;
  const tokens = result.usage.total_tokens;
  const status = agent.config?.complete_to === 'done' ? 'done' : 'review';
  for (let round = 1; ; round += 1) {
    const now = ctx.ports.clock.now();
    const { balance } = await getBalance(orgId);
    if (balance < tokens) {
      const error = `The token balance (${balance}) cannot pay for the run (${tokens} tokens)`;
      return fail(ctx, { ...run, error });
    }
    const lastRun = taskRun(run, now, {
      status: 'succeeded',
      output: result.output,
      usage: result.usage,
      model: result.model,
    });
    const debit = debitWrites({ orgId, agent, task, tokens, attempt: run.attempt, model: result.model, balance, now });
    const line = logWrite(
      orgId,
      {
        agent: agent.name,
        level: 'info',
        message: `Finished task #${task.id} (${status}), ${tokens} tokens`,
        meta: { task_id: task.id, tokens, model: result.model },
      },
      now,
    );
    // Reaching done writes its own changelog entry (lib/tasks/task-completion); review needs one here.
    const entry =
      status === 'review'
        ? [
            changelogWrite(
              orgId,
              {
                title: `${agent.name} finished task #${task.id}: ${task.title} (ready for review)`,
                area: task.product ?? 'tasks',
                agent: agent.name,
                task_id: task.id,
                product: task.product,
              },
              now,
            ),
          ]
        : [];
    try {
      await updateTaskAs(
        ctx,
        actorOf(orgId, agent),
        task.id,
        { status },
        {
          expectStatus: 'in_progress',
          lastRun,
          alsoWrite: [...debit, line, ...entry],
          action: 'task.run_succeeded',
          activityMetadata: { tokens, model: result.model },
        },
      );
    } catch (error) {
      if (isConditionFailed(error, 'balance-moved') && round < DEBIT_ATTEMPTS) continue;
      if (!isConditionFailed(error, 'status-changed')) throw error;
      // The task was changed (cancelled, reassigned) while the agent worked: the output is not kept,
      // the tokens the run used are still consumed.
      await transact([...debit, logWrite(orgId, discarded(agent, task, tokens), now)]).catch((failure: Error) => {
        if (!isConditionFailed(failure)) throw failure;
      });
    }
    await recordAgentState(
      orgId,
      agent.id,
      (latest) => ({
        status: unlessHalted(latest, 'idle'),
        current_task: null,
        last_error: null,
        last_run_at: now.toISOString(),
        last_heartbeat: now.toISOString(),
        tasks_completed: (latest.tasks_completed ?? 0) + 1,
        ...withTokensUsed(latest, tokens, now),
      }),
      now,
    );
    return { outcome: 'succeeded', task_id: task.id, status, tokens };
  }
}

const discarded = (agent: AgentItem, task: Task, tokens: number) => ({
  agent: agent.name,
  level: 'warn' as const,
  message: `Task #${task.id} changed while ${agent.name} worked on it; the run's output was not kept`,
  meta: { task_id: task.id, tokens },
});

/** The debit of a run's tokens, once per run (its reference id), conditional on the balance read. */
function debitWrites(input: {
  orgId: string;
  agent: AgentItem;
  task: Task;
  tokens: number;
  attempt: number;
  model: string;
  balance: number;
  now: Date;
}): TransactItem[] {
  if (input.tokens <= 0) return [];
  return ledgerWrites({
    orgId: input.orgId,
    type: 'consume',
    amount: -input.tokens,
    action: 'agent_run',
    referenceId: `agent-run-${input.agent.id}-${input.task.id}-${input.attempt}`,
    metadata: { agent: input.agent.name, task_id: input.task.id, model: input.model },
    actor: `agent:${input.agent.name}`,
    now: input.now,
    balanceBefore: input.balance,
  }).writes;
}

async function fail(ctx: RequestContext, run: Finished & { error: string }): Promise<TickOutcome> {
  const { orgId, agent, task, error } = run;
  const now = ctx.ports.clock.now();
  const status = run.attempt >= MAX_RUN_ATTEMPTS ? 'blocked' : 'todo';
  const event = await prepareEvent(
    orgId,
    'agent_error',
    {
      agent: { id: agent.id, name: agent.name },
      task: { id: task.id, title: task.title },
      error,
      attempt: run.attempt,
    },
    now,
  );
  const line = logWrite(
    orgId,
    {
      agent: agent.name,
      level: 'error',
      message: `Run ${run.attempt} of task #${task.id} failed: ${error}`,
      meta: { task_id: task.id, attempt: run.attempt, task_status: status },
    },
    now,
  );
  const lastRun = taskRun(run, now, { status: 'failed', error });
  const extra = [line, ...(event ? [event.write] : [])];
  try {
    await updateTaskAs(
      ctx,
      actorOf(orgId, agent),
      task.id,
      { status },
      {
        expectStatus: 'in_progress',
        lastRun,
        alsoWrite: extra,
        action: 'task.run_failed',
        activityMetadata: { error },
      },
    );
  } catch (failure) {
    if (!isConditionFailed(failure, 'status-changed')) throw failure;
    await transact(extra);
  }
  if (event) await queuePrepared(ctx, event);
  await recordAgentState(
    orgId,
    agent.id,
    (latest) => ({
      status: unlessHalted(latest, 'error'),
      current_task: null,
      last_error: error,
      last_run_at: now.toISOString(),
      last_heartbeat: now.toISOString(),
      tasks_failed: (latest.tasks_failed ?? 0) + 1,
    }),
    now,
  );
  return { outcome: 'failed', task_id: task.id, status, error };
}
