import * as z from 'zod';
import { AGENT_NAME_MAX, AGENT_NAME_PATTERN } from '#lib/agents/agent-keys';
import { RUN_MODES, SKIP_REASONS } from '#lib/agents/idle-check';
import { defineRoute } from '#lib/http/route';

/** Agent runs: the idle check schedulers and agents ask before a cycle; the `agent-runs` function. */

const group = 'agent-runs';
const tags = ['Agents'];

export const IdleCheckRecord = z
  .object({
    agent_name: z.string(),
    run_mode: z.enum(RUN_MODES),
    skip: z.boolean().meta({ description: 'Whether this cycle should be skipped' }),
    reason: z.enum(SKIP_REASONS).nullable().meta({ description: 'Why, when skipped' }),
    message: z.string(),
    task_id: z.number().int().nullable().meta({ description: 'The task a run would take now (run mode task)' }),
    checked_at: z.string(),
  })
  .meta({ id: 'IdleCheck' });

export const idleCheck = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agent-runs/idle-check',
  auth: 'none',
  summary: 'Whether an agent should skip this cycle, and why',
  description:
    'Spends no model tokens and changes nothing. Checks, cheapest first, and answers the first that fails:\n\n' +
    '| reason | skipped when |\n|---|---|\n' +
    '| `stopped` | the agent is stopped or offline |\n' +
    '| `budget_exhausted` | the agent’s `monthly_token_budget` has less left than one run is expected to use |\n' +
    '| `insufficient_balance` | the organization’s token balance is below one run’s expected use |\n' +
    '| `no_task` | (run mode `task`) no runnable todo task: none assigned to the agent (nor unassigned, with ' +
    '`config.take_unassigned`) whose dependencies are all done or cancelled |\n\n' +
    'One run’s expected use is the agent’s `config.max_tokens`, else its average per run so far, else 1. ' +
    'No credential is read: the organization is named by `organization_id` (or the `X-Organization-Id` ' +
    'header), and the answer carries reason codes only, never balances or budgets. Run mode `discovery` ' +
    'skips the task check. An unknown agent is 404.',
  query: z.object({
    agent_name: z
      .string()
      .max(AGENT_NAME_MAX)
      .regex(AGENT_NAME_PATTERN, 'lowercase letters, digits and hyphens, starting with a letter'),
    run_mode: z.enum(RUN_MODES).optional().meta({ description: 'task (default) or discovery' }),
    organization_id: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: 'The agent’s organization; required unless X-Organization-Id is sent' }),
  }),
  response: IdleCheckRecord,
  errors: [404],
});
