import { type BudgetView, budgetOf } from '#lib/agents/agent-budget';
import type { AgentItem, AgentSchedule, AgentStatus } from '#lib/agents/agent-keys';
import { type PublicAgentStatus, toPublicStatus } from '#lib/agents/agent-status';
import { type AutomationItem, type AutomationSummary, toAutomationSummary } from '#lib/automations/automation-keys';

/**
 * How an agent record is shown: the operational view (`/agents`: configuration, schedule, automations,
 * run figures, budget) and the public one (`/v1/public/agents`: the fields the public API names, the
 * status in its vocabulary). Both are mapped from the stored item field by field, never spread.
 */

/** How many coming runs a schedule shows. */
export const NEXT_RUNS_SHOWN = 3;

export interface ScheduleView {
  expression: string;
  enabled: boolean;
  interval_sec: number;
  note: string | null;
  /** The next runs after now, ISO 8601; empty while the schedule is disabled. */
  next_runs: string[];
}

export interface AgentView {
  id: number;
  name: string;
  display_name: string | null;
  role: string | null;
  status: AgentStatus;
  model: string | null;
  emoji: string | null;
  color: string | null;
  interval_sec: number | null;
  last_heartbeat: string | null;
  created_at: string;
  updated_at: string;
  identity: string | null;
  soul_content: string | null;
  core_rules: string | null;
  tools: string[];
  capabilities: string[];
  config: Record<string, unknown>;
  template_slug: string | null;
  workspace_path: string | null;
  current_task: string | null;
  schedule: ScheduleView | null;
  automations: AutomationSummary[];
  completion_rate: number | null;
  tasks_completed: number;
  tasks_failed: number;
  tokens_used: number;
  budget: BudgetView | null;
  last_run_at: string | null;
  last_error: string | null;
  skip_reason: string | null;
}

export interface PublicAgentView {
  id: number;
  name: string;
  role: string | null;
  emoji: string | null;
  status: PublicAgentStatus;
  workspace_path: string | null;
  current_task: string | null;
  display_name: string | null;
  model: string | null;
  last_heartbeat: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The next `count` runs strictly after `now`: ticks fall on `anchor_at + k × interval_sec`, so the list
 * is computed, never stored, and stays right however long ago the schedule was made.
 */
export function nextRuns(schedule: AgentSchedule, now: Date, count = NEXT_RUNS_SHOWN): string[] {
  if (!schedule.enabled) return [];
  const anchor = Date.parse(schedule.anchor_at);
  const step = schedule.interval_sec * 1000;
  if (Number.isNaN(anchor) || step <= 0) return [];
  const first = Math.floor((now.getTime() - anchor) / step) + 1;
  return Array.from({ length: count }, (_, k) => new Date(anchor + (first + k) * step).toISOString());
}

export const scheduleView = (schedule: AgentSchedule | null | undefined, now: Date): ScheduleView | null =>
  schedule
    ? {
        expression: schedule.expression,
        enabled: schedule.enabled,
        interval_sec: schedule.interval_sec,
        note: schedule.note ?? null,
        next_runs: nextRuns(schedule, now),
      }
    : null;

/** Finished runs that completed their task, as a fraction 0..1; null before the first finished run. */
export function completionRate(completed: number, failed: number): number | null {
  const runs = completed + failed;
  return runs === 0 ? null : completed / runs;
}

export function toAgentView(item: AgentItem, automations: AutomationItem[], now: Date): AgentView {
  const completed = item.tasks_completed ?? 0;
  const failed = item.tasks_failed ?? 0;
  return {
    id: item.id,
    name: item.name,
    display_name: item.display_name ?? null,
    role: item.role ?? null,
    status: item.status,
    model: item.model ?? null,
    emoji: item.emoji ?? null,
    color: item.color ?? null,
    interval_sec: item.interval_sec ?? null,
    last_heartbeat: item.last_heartbeat ?? null,
    created_at: item.created_at,
    updated_at: item.updated_at,
    identity: item.identity ?? null,
    soul_content: item.soul_content ?? null,
    core_rules: item.core_rules ?? null,
    tools: [...(item.tools ?? [])],
    capabilities: [...(item.capabilities ?? [])],
    config: { ...(item.config ?? {}) },
    template_slug: item.template_slug ?? null,
    workspace_path: item.workspace_path ?? null,
    current_task: item.current_task ?? null,
    schedule: scheduleView(item.schedule, now),
    automations: automations.filter((automation) => automation.agent_name === item.name).map(toAutomationSummary),
    completion_rate: completionRate(completed, failed),
    tasks_completed: completed,
    tasks_failed: failed,
    tokens_used: item.tokens_used ?? 0,
    budget: budgetOf(item, now),
    last_run_at: item.last_run_at ?? null,
    last_error: item.last_error ?? null,
    skip_reason: item.skip_reason ?? null,
  };
}

export const toPublicAgent = (item: AgentItem): PublicAgentView => ({
  id: item.id,
  name: item.name,
  role: item.role ?? null,
  emoji: item.emoji ?? null,
  status: toPublicStatus(item.status),
  workspace_path: item.workspace_path ?? null,
  current_task: item.current_task ?? null,
  display_name: item.display_name ?? null,
  model: item.model ?? null,
  last_heartbeat: item.last_heartbeat ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
});
