import type { AgentItem } from '#lib/agents/agent-keys';

/**
 * Monthly token budgets (beyond the specification): an agent with `monthly_token_budget` may use that
 * many tokens per calendar month (UTC). `budget_used` counts the tokens of `budget_month`; a new month
 * starts from zero without any write.
 */

/** `2026-11` for any time in November 2026 (UTC). */
export const monthOf = (now: Date): string => now.toISOString().slice(0, 7);

/** Tokens the agent used in the month of `now`. */
export const budgetUsed = (agent: Pick<AgentItem, 'budget_month' | 'budget_used'>, now: Date): number =>
  agent.budget_month === monthOf(now) ? (agent.budget_used ?? 0) : 0;

export interface BudgetView {
  monthly_token_budget: number;
  month: string;
  used: number;
  remaining: number;
}

/** The budget as agents show it; null for an agent without one. */
export function budgetOf(agent: AgentItem, now: Date): BudgetView | null {
  if (agent.monthly_token_budget === null || agent.monthly_token_budget === undefined) return null;
  const used = budgetUsed(agent, now);
  return {
    monthly_token_budget: agent.monthly_token_budget,
    month: monthOf(now),
    used,
    remaining: Math.max(0, agent.monthly_token_budget - used),
  };
}

/**
 * The tokens one run is expected to use: the agent's cap (`config.max_tokens`) when it has one,
 * otherwise its average so far, and 1 before its first run (so an exhausted budget or balance skips).
 */
export function runEstimate(agent: AgentItem): number {
  const cap = agent.config?.max_tokens;
  if (typeof cap === 'number' && Number.isInteger(cap) && cap > 0) return cap;
  const runs = (agent.tasks_completed ?? 0) + (agent.tasks_failed ?? 0);
  return runs > 0 && agent.tokens_used > 0 ? Math.max(1, Math.ceil(agent.tokens_used / runs)) : 1;
}

/** The agent after a run that used `tokens`, counted in the month of `now`. */
export function withTokensUsed(
  agent: AgentItem,
  tokens: number,
  now: Date,
): Pick<AgentItem, 'budget_month' | 'budget_used' | 'tokens_used'> {
  return {
    budget_month: monthOf(now),
    budget_used: budgetUsed(agent, now) + tokens,
    tokens_used: (agent.tokens_used ?? 0) + tokens,
  };
}
