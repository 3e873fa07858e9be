import { budgetOf, runEstimate } from '#lib/agents/agent-budget';
import type { AgentItem } from '#lib/agents/agent-keys';
import { getAgentByName } from '#lib/agents/agent-records';
import { NotFoundError } from '#lib/errors';
import type { TaskItem } from '#lib/tasks/task-keys';
import { nextTaskItem } from '#lib/tasks/task-queries';
import { getBalance } from '#lib/tokens/ledger';

/**
 * Whether an agent's cycle should be skipped, and why, without spending a model token. Checks run
 * cheapest first and the first that fails answers:
 *
 * | reason | skipped when |
 * |---|---|
 * | `stopped` | the agent is stopped or offline |
 * | `budget_exhausted` | the month's `monthly_token_budget` has less left than one run is expected to use |
 * | `insufficient_balance` | the organization's token balance is below one run's expected use |
 * | `no_task` | (run mode `task`) no runnable `todo` task: none assigned to the agent (nor unassigned, with |
 * |           | `config.take_unassigned`) whose dependencies are all done or cancelled |
 *
 * One run's expected use is the agent's `config.max_tokens`, else its average per run so far, else 1.
 * Messages carry no figures: the check answers callers without a credential.
 */
export const RUN_MODES = ['task', 'discovery'] as const;
export type RunMode = (typeof RUN_MODES)[number];

export const SKIP_REASONS = ['stopped', 'budget_exhausted', 'insufficient_balance', 'no_task'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface IdleCheck {
  skip: boolean;
  reason: SkipReason | null;
  message: string;
  /** The task a run would take now (run mode `task`, not skipped). */
  task: TaskItem | null;
}

/** The agent's next task: its own highest-priority runnable todo task, else (when it takes them) an unassigned one. */
export async function nextTaskFor(orgId: string, agent: AgentItem): Promise<TaskItem | undefined> {
  const own = await nextTaskItem(orgId, { assignee: agent.name });
  if (own || agent.config?.take_unassigned !== true) return own;
  return nextTaskItem(orgId, { assignee: '' });
}

const skipped = (reason: SkipReason, message: string): IdleCheck => ({ skip: true, reason, message, task: null });

export async function checkAgent(orgId: string, agent: AgentItem, runMode: RunMode, now: Date): Promise<IdleCheck> {
  if (agent.status === 'stopped' || agent.status === 'offline') {
    return skipped('stopped', `Agent ${agent.name} is ${agent.status}; start it to run again`);
  }
  const needed = runEstimate(agent);
  const budget = budgetOf(agent, now);
  if (budget && budget.remaining < needed) {
    return skipped('budget_exhausted', `Agent ${agent.name} has used its monthly token budget for ${budget.month}`);
  }
  const { balance } = await getBalance(orgId);
  if (balance < needed) {
    return skipped('insufficient_balance', "The organization's token balance is below one run's expected use");
  }
  if (runMode === 'discovery') return { skip: false, reason: null, message: 'Ready to run', task: null };
  const task = await nextTaskFor(orgId, agent);
  if (!task) return skipped('no_task', `Agent ${agent.name} has no runnable todo task`);
  return { skip: false, reason: null, message: `Ready to run task #${task.id}`, task };
}

/** GET /agent-runs/idle-check: the check of the agent called `name` in the organization. */
export async function idleCheck(
  orgId: string,
  name: string,
  runMode: RunMode,
  now: Date,
): Promise<
  Omit<IdleCheck, 'task'> & { agent_name: string; run_mode: RunMode; task_id: number | null; checked_at: string }
> {
  const agent = await getAgentByName({ orgId, name, consistent: true });
  if (!agent) throw new NotFoundError(`No agent named ${name}`);
  const { task, ...check } = await checkAgent(orgId, agent, runMode, now);
  return { agent_name: name, run_mode: runMode, ...check, task_id: task?.id ?? null, checked_at: now.toISOString() };
}
