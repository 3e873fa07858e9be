import { activityWrites } from '#lib/activity/activity-log';
import { withTokensUsed } from '#lib/agents/agent-budget';
import type { AgentItem } from '#lib/agents/agent-keys';
import { recordAgentState, unlessHalted } from '#lib/agents/agent-state';
import { changelogWrite } from '#lib/changelog/changelog';
import { type TransactItem, transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import type { AgentRunResult } from '#lib/kernel/ports';
import { logWrite } from '#lib/logs/log-records';
import { orgDayWrite, orgTotalsWrite } from '#lib/metrics/metric-records';
import type { Task, TaskRun } from '#lib/tasks/task-keys';
import { type TaskActor, updateTaskAs } from '#lib/tasks/task-update';
import { getBalance, ledgerWrites } from '#lib/tokens/ledger';
import { prepareEvent, queuePrepared } from '#lib/webhooks/outbound/events';

/**
 * How an agent run ends (lib/agents/agent-tick.ts runs it): a success moves the task on, consumes the
 * tokens and writes the log and changelog entries in one transaction; a failure puts the task back
 * (blocked after MAX_RUN_ATTEMPTS) and emits `agent_error`. Either way the agent's state follows, and
 * the run's activity entry (`task.run_succeeded`, `task.run_failed`, or `task.run_discarded` when the
 * task changed while the agent worked) and its counts land with the run's transaction.
 */

/** Failed runs of one task before it is set aside as blocked instead of todo. */
export const MAX_RUN_ATTEMPTS = 3;

export type RunEnd =
  | { outcome: 'succeeded'; task_id: number; status: 'review' | 'done'; tokens: number }
  | { outcome: 'failed'; task_id: number; status: 'todo' | 'blocked'; error: string };

export const agentActor = (orgId: string, agent: AgentItem): TaskActor => ({
  orgId,
  activity: { actor_type: 'agent', actor_id: `agent:${agent.name}` },
});

export interface Finished {
  orgId: string;
  agent: AgentItem;
  task: Task;
  attempt: number;
  startedAt: string;
}

/** The run as the task keeps it. */
export const taskRun = (run: Finished, now: Date, outcome: Partial<TaskRun> & Pick<TaskRun, 'status'>): TaskRun => ({
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

export async function succeed(ctx: RequestContext, run: Finished & { result: AgentRunResult }): Promise<RunEnd> {
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
        agentActor(orgId, agent),
        task.id,
        { status },
        {
          expectStatus: 'in_progress',
          lastRun,
          alsoWrite: [...debit, line, ...entry, ...runCounts(orgId, 'succeeded', now)],
          action: 'task.run_succeeded',
          activityMetadata: { tokens, model: result.model },
        },
      );
    } catch (error) {
      if (isConditionFailed(error, 'balance-moved') && round < DEBIT_ATTEMPTS) continue;
      if (!isConditionFailed(error, 'status-changed')) throw error;
      // The task was changed (cancelled, reassigned) while the agent worked: the output is not kept,
      // the tokens the run used are still consumed.
      await transact([
        ...debit,
        logWrite(orgId, discarded(agent, task, tokens), now),
        ...runCounts(orgId, 'succeeded', now),
        ...activityWrites(orgId, runEntry(agent, task, 'task.run_discarded', { tokens, model: result.model }), now),
      ]).catch((failure: Error) => {
        if (!isConditionFailed(failure)) throw failure;
      });
    }
    await recordAgentState(
      orgId,
      agent.id,
      (latest) => ({
        status: unlessHalted(latest, 'idle'),
        current_task: null,
        running_task_id: null,
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

/**
 * A run's counts for the dashboards (lib/metrics): the organization's runs by outcome and the day's
 * runs, in the transaction that records the run.
 */
const runCounts = (orgId: string, outcome: 'succeeded' | 'failed', now: Date): TransactItem[] => [
  orgTotalsWrite(orgId, { [`agent_runs_${outcome}`]: 1 }),
  orgDayWrite(orgId, now, { agent_runs: 1 }),
];

/** The activity entry of a run whose task update did not land (the task changed while the agent worked). */
const runEntry = (agent: AgentItem, task: Task, action: string, metadata: Record<string, unknown>) => ({
  actor_type: 'agent' as const,
  actor_id: `agent:${agent.name}`,
  action,
  entity_type: 'task',
  entity_id: String(task.id),
  metadata,
});

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

export async function fail(ctx: RequestContext, run: Finished & { error: string }): Promise<RunEnd> {
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
  const extra = [line, ...(event ? [event.write] : []), ...runCounts(orgId, 'failed', now)];
  try {
    await updateTaskAs(
      ctx,
      agentActor(orgId, agent),
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
    // The task changed meanwhile, so its update (and the entry it carries) did not land.
    const entry = runEntry(agent, task, 'task.run_failed', { error, task_changed: true });
    await transact([...extra, ...activityWrites(orgId, entry, now)]);
  }
  if (event) await queuePrepared(ctx, event);
  await recordAgentState(
    orgId,
    agent.id,
    (latest) => ({
      status: unlessHalted(latest, 'error'),
      current_task: null,
      running_task_id: null,
      last_error: error,
      last_run_at: now.toISOString(),
      last_heartbeat: now.toISOString(),
      tasks_failed: (latest.tasks_failed ?? 0) + 1,
    }),
    now,
  );
  return { outcome: 'failed', task_id: task.id, status, error };
}
