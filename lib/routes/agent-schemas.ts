import * as z from 'zod';
import { STEP_NAMES } from '#lib/agents/agent-create';
import { AGENT_STATUSES, PUBLIC_AGENT_STATUSES } from '#lib/agents/agent-status';
import { NEXT_RUNS_SHOWN } from '#lib/agents/agent-view';

/** The shapes of the agents routes' records (lib/routes/agents.ts): the operational and the public agent. */

export const ScheduleRecord = z
  .object({
    expression: z.string().meta({ description: 'As the scheduler runs it, e.g. `rate(5 minutes)`' }),
    enabled: z.boolean(),
    interval_sec: z.number().int().meta({ description: 'Seconds between runs as the scheduler runs them' }),
    note: z.string().nullable().meta({ description: 'How the schedule differs from what was asked, if it does' }),
    next_runs: z.array(z.string()).meta({
      description: `The next ${NEXT_RUNS_SHOWN} runs after now (ISO 8601); empty while the schedule is disabled`,
    }),
  })
  .meta({ id: 'AgentSchedule' });

export const AutomationRef = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.string(),
    status: z.enum(['active', 'inactive', 'disabled']),
  })
  .meta({ id: 'AgentAutomation' });

export const BudgetRecord = z
  .object({
    monthly_token_budget: z.number().int(),
    month: z.string().meta({ description: 'The current month, `YYYY-MM` (UTC)' }),
    used: z.number().int(),
    remaining: z.number().int(),
  })
  .meta({ id: 'AgentBudget' });

export const AgentRecord = z
  .object({
    id: z.number().int().meta({ description: 'Integer id, unique within the organization' }),
    name: z.string(),
    display_name: z.string().nullable(),
    role: z.string().nullable(),
    status: z.enum(AGENT_STATUSES).meta({ description: 'The stored status (see the table in the description)' }),
    model: z.string().nullable(),
    emoji: z.string().nullable(),
    color: z.string().nullable().meta({ description: 'Lowercase `#rrggbb`' }),
    interval_sec: z.number().int().nullable().meta({ description: 'As asked at creation' }),
    last_heartbeat: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    identity: z.string().nullable(),
    soul_content: z.string().nullable(),
    core_rules: z.string().nullable(),
    tools: z.array(z.string()),
    capabilities: z.array(z.string()),
    config: z.record(z.string(), z.unknown()),
    template_slug: z.string().nullable(),
    workspace_path: z.string().nullable(),
    current_task: z.string().nullable(),
    schedule: ScheduleRecord.nullable(),
    automations: z.array(AutomationRef),
    completion_rate: z.number().min(0).max(1).nullable().meta({
      description: 'tasks_completed / (tasks_completed + tasks_failed); null before the first finished run',
    }),
    tasks_completed: z.number().int(),
    tasks_failed: z.number().int(),
    tokens_used: z.number().int(),
    budget: BudgetRecord.nullable().meta({ description: 'Addition; null without a monthly_token_budget' }),
    last_run_at: z.string().nullable(),
    last_error: z.string().nullable(),
    skip_reason: z.string().nullable().meta({
      description: 'Why the last tick was skipped: stopped, no_task, insufficient_balance or budget_exhausted',
    }),
  })
  .meta({ id: 'Agent' });

export const StepRecord = z
  .object({
    step: z.enum(STEP_NAMES),
    ok: z.boolean(),
    detail: z.string(),
  })
  .meta({ id: 'AgentBootstrapStep' });

export const PublicAgentRecord = z
  .object({
    id: z.number().int(),
    name: z.string(),
    role: z.string().nullable(),
    emoji: z.string().nullable(),
    status: z.enum(PUBLIC_AGENT_STATUSES),
    workspace_path: z.string().nullable(),
    current_task: z.string().nullable(),
    display_name: z.string().nullable(),
    model: z.string().nullable(),
    last_heartbeat: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'PublicAgent' });
