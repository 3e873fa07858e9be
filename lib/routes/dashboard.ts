import * as z from 'zod';
import { AGENT_STATUSES } from '#lib/agents/agent-status';
import { defineRoute } from '#lib/http/route';
import { EXECUTION_STATUSES } from '#lib/pipelines/execution-keys';
import { TASK_STATUSES } from '#lib/tasks/task-status';

/** The dashboards: the instance's totals (no credential) and the organization's; the `dashboard` function. */

const group = 'dashboard';
const tags = ['Monitoring'];

const count = z.number().int().min(0);
const countsOf = <const S extends string>(states: readonly S[], id: string) =>
  z.object(Object.fromEntries(states.map((state) => [state, count])) as Record<S, typeof count>).meta({ id });

const COUNTERS_NOTE =
  'Counts come from counters kept in the same transaction as the changes they count, so a request reads ' +
  'a handful of items whatever the amount of data.';

export const InstanceDashboardRecord = z
  .object({
    generated_at: z.string(),
    totals: z.object({ organizations: count, agents: count, tasks: count, executions: count }).meta({
      description: 'The whole instance: organizations (not deleted), agents, tasks (not deleted), executions',
    }),
    endpoints: z.array(z.object({ path: z.string(), summary: z.string(), auth: z.literal('bearer') })),
  })
  .meta({ id: 'InstanceDashboard' });

export const DashboardStatsRecord = z
  .object({
    generated_at: z.string(),
    tasks: z.object({ total: count, by_status: countsOf(TASK_STATUSES, 'DashboardTaskCounts') }),
    agents: z.object({ total: count, by_status: countsOf(AGENT_STATUSES, 'DashboardAgentCounts') }),
    products: count,
    pipelines: count,
    executions: z.object({ total: count, by_status: countsOf(EXECUTION_STATUSES, 'DashboardExecutionCounts') }),
    agent_runs: z.object({ succeeded: count, failed: count }),
    tokens_used: count,
  })
  .meta({ id: 'DashboardStats' });

export const AgentEfficiencyRecord = z
  .object({
    agents: z.array(
      z.object({
        id: z.number().int(),
        name: z.string(),
        status: z.enum(AGENT_STATUSES),
        tasks_completed: count,
        tasks_failed: count,
        tokens_used: count,
        tasks_per_1k_tokens: z
          .number()
          .nullable()
          .meta({ description: 'Completed tasks per 1,000 tokens (3 decimals); null before any token was used' }),
      }),
    ),
  })
  .meta({ id: 'AgentEfficiency' });

const QueueHealthRecord = z
  .object({
    queued: count.meta({ description: 'Tasks in todo' }),
    oldest_task_id: z.number().int().nullable(),
    oldest_wait_seconds: count.nullable().meta({ description: 'Since the oldest queued task became todo' }),
    average_wait_seconds: count.nullable(),
  })
  .meta({ id: 'QueueHealth' });

export const AgentQueueHealthRecord = z
  .object({
    generated_at: z.string(),
    agents: z.array(
      z
        .object({ id: z.number().int(), name: z.string(), status: z.enum(AGENT_STATUSES) })
        .extend(QueueHealthRecord.shape),
    ),
    unassigned: QueueHealthRecord,
  })
  .meta({ id: 'AgentQueueHealth' });

export const DashboardOverviewRecord = z
  .object({
    generated_at: z.string(),
    token_balance: z.number().int(),
    recent_runs: z.array(
      z.object({
        agent: z.string(),
        task_id: z.number().int().nullable(),
        outcome: z
          .string()
          .meta({ description: 'succeeded, failed, discarded (the task changed meanwhile), interrupted' }),
        tokens: z.number().nullable(),
        model: z.string().nullable(),
        error: z.string().nullable(),
        at: z.string(),
      }),
    ),
    protocols: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        category: z.string(),
        protocol: z.string(),
        status: z.enum(['configured', 'partially_configured', 'not_configured']),
        events: z.array(z.string()).meta({ description: 'Outbound webhooks: the events that have a URL' }),
      }),
    ),
    usage_7d: z.array(
      z.object({
        date: z.string(),
        tokens_used: count,
        agent_runs: count,
        tasks_completed: count,
        executions_started: count,
      }),
    ),
  })
  .meta({ id: 'DashboardOverview' });

export const instanceDashboard = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/dashboard',
  auth: 'none',
  summary: 'The instance’s totals and the list of dashboards',
  description:
    'No credential. Instance-wide totals only (organizations, agents, tasks, pipeline executions), never ' +
    `anything of one organization; the dashboards listed need a credential. ${COUNTERS_NOTE}`,
  response: InstanceDashboardRecord,
});

export const dashboardStats = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/dashboard/stats',
  auth: 'bearer',
  summary: 'The organization’s aggregate counts',
  description:
    'Tasks, agents and pipeline executions by status, products, pipelines, agent runs and tokens used ' +
    `(all \`consume\` entries of the ledger). ${COUNTERS_NOTE} Agents are counted from the organization’s ` +
    'agents themselves (tens, not thousands: one read).',
  response: DashboardStatsRecord,
});

export const dashboardOverview = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/dashboard/overview',
  auth: 'bearer',
  summary: 'Token balance, recent agent runs, protocols and 7-day usage',
  description:
    '`recent_runs`: the last 10 agent runs, from the activity log. `protocols`: how the organization’s ' +
    'work connects to the outside, one per integration of the catalogue (status as GET /integrations ' +
    'shows it, and the protocol it speaks) and the outbound webhooks (Standard Webhooks) with the events ' +
    'that have a URL; never a value or a URL. `usage_7d`: per UTC day, today and the 6 before, the tokens ' +
    'used, agent runs, tasks completed and executions started.',
  response: DashboardOverviewRecord,
});

export const agentEfficiency = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/dashboard/agent-efficiency',
  auth: 'bearer',
  summary: 'The organization’s agents by completed tasks per 1,000 tokens',
  description:
    'The most efficient first; agents that used no tokens yet last. From the counts each run keeps on ' + 'its agent.',
  response: AgentEfficiencyRecord,
});

export const agentQueueHealth = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/dashboard/agent-queue-health',
  auth: 'bearer',
  summary: 'Queued tasks and wait times per agent',
  description:
    'Per agent, its todo tasks (assigned to it) and how long they have waited since they became todo ' +
    '(kept through a reassignment): the oldest and the average, in seconds; the most queued first. ' +
    '`unassigned`: todo tasks without an assignee. Each queue is kept on write in a partition of its own: ' +
    'one read per agent, whatever the number of tasks.',
  response: AgentQueueHealthRecord,
});
