import * as z from 'zod';
import { AGENT_NAME_MAX, AGENT_NAME_PATTERN } from '#lib/agents/agent-keys';
import { AGENT_STATUSES, agentStatusTableMarkdown, PUBLIC_AGENT_STATUSES } from '#lib/agents/agent-status';
import { defineRoute } from '#lib/http/route';
import { freeFormObject, pagingQuery, valueList } from '#lib/http/schemas';
import { AgentRecord, PublicAgentRecord, StepRecord } from '#lib/routes/agent-schemas';
import { hexColor, integerId } from '#lib/routes/schemas';

/**
 * Agents, operational (`/agents`, addressed by name) and public (`/v1/public/agents`, addressed by id):
 * one record behind both, served by the `agents` function.
 */

const group = 'agents';
const tags = ['Agents'];
const publicTags = ['Public API'];

export const MAX_PROMPT_TEXT = 20_000;
const CONFIG_LIMITS = { maxDepth: 8, maxBytes: 16_384 };

const STATUS_TABLE = [
  'The operational API shows the stored status; the public API shows and takes its own words, mapped one to one:',
  agentStatusTableMarkdown(),
].join('\n\n');

const agentName = z
  .string()
  .regex(AGENT_NAME_PATTERN, `lowercase letters, digits and hyphens, starting with a letter, at most ${AGENT_NAME_MAX}`)
  .meta({ description: 'Lowercase letters, digits and hyphens, starting with a letter; at most 40 characters' });

const shortText = (max: number) => z.string().trim().max(max).nullable();
const promptText = z.string().max(MAX_PROMPT_TEXT).nullable();
const names = z
  .array(z.string().trim().min(1).max(100))
  .max(100)
  .nullable()
  .meta({ description: 'At most 100 names of at most 100 characters; null means none' });

const workspacePath = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters')
  .refine((path) => !path.split(/[\\/]/).includes('..'), 'must not contain a `..` segment')
  .meta({ description: 'Where the agent works, as recorded (default `agents/<name>`); no `..` segments' });

const intervalSec = z
  .number()
  .int()
  .min(1)
  .max(86_400)
  .nullable()
  .meta({
    description:
      'Seconds between scheduled runs, 1 to 86400; null or absent: no schedule (the agent runs only when asked). ' +
      'A scheduler that cannot run the interval exactly (EventBridge: whole minutes) rounds it up, and says so ' +
      'in `schedule.note`.',
  });

const monthlyTokenBudget = z
  .number()
  .int()
  .min(1)
  .max(1_000_000_000_000)
  .nullable()
  .meta({
    description:
      'Addition: tokens the agent may use per calendar month (UTC); null for no budget. A tick past the ' +
      'budget is skipped with `skip_reason` `budget_exhausted`.',
  });

const agentConfig = freeFormObject(CONFIG_LIMITS)
  .superRefine((config, issues) => {
    if ('complete_to' in config && config.complete_to !== 'review' && config.complete_to !== 'done') {
      issues.addIssue({ code: 'custom', path: ['complete_to'], message: 'must be review or done' });
    }
    if ('take_unassigned' in config && typeof config.take_unassigned !== 'boolean') {
      issues.addIssue({ code: 'custom', path: ['take_unassigned'], message: 'must be true or false' });
    }
    const cap = config.max_tokens;
    if ('max_tokens' in config && !(typeof cap === 'number' && Number.isInteger(cap) && cap > 0 && cap <= 1_000_000)) {
      issues.addIssue({ code: 'custom', path: ['max_tokens'], message: 'must be an integer from 1 to 1000000' });
    }
  })
  .nullable()
  .meta({
    description:
      `Free-form settings, at most ${CONFIG_LIMITS.maxDepth} levels deep and ${CONFIG_LIMITS.maxBytes} bytes as ` +
      'JSON. Keys the service reads: `complete_to` (`review`, the default, or `done`) is where a task the ' +
      'agent finishes goes; `take_unassigned` (boolean) lets the agent take unassigned todo tasks when it has ' +
      'none of its own; `max_tokens` (1 to 1,000,000) caps a run’s answer and is the run’s expected use in the ' +
      'idle check.',
  });

export const listAgents = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agents',
  auth: 'bearer',
  summary: 'List agents with their schedules, automations and figures',
  description:
    'Oldest first. `status` keeps the agents whose stored status is one of the given values (an unknown value ' +
    `is a 400; an empty value filters nothing).\n\n${STATUS_TABLE}`,
  query: pagingQuery.extend({
    status: valueList(AGENT_STATUSES, 'status')
      .optional()
      .meta({ description: `Comma-separated stored statuses: ${AGENT_STATUSES.join(', ')}` }),
  }),
  envelope: 'list',
  response: AgentRecord,
  errors: [503],
});

export const createAgent = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/agents',
  auth: 'bearer',
  summary: 'Create an agent (the bootstrap, step by step)',
  description: [
    'Takes the body a template’s apply answers as it is. `name` is required and unique in the organization ' +
      '(409 when taken, also between concurrent creates); it cannot change later. Answers **200** (as the ' +
      'specification says) with `{ agent, steps }`, where `steps` reports, in this order: `registration` (one ' +
      'transaction writes the agent, its name, its tick automation, its search postings, the `agent.created` ' +
      'activity entry and a log line), `workspace` (the recorded `workspace_path`, default `agents/<name>`), ' +
      '`rules` (the core rule lines and soul sections recorded), `run_configuration` (model, interval, ' +
      '`config.complete_to`), ' +
      '`automations` (the tick automation `<name>-tick`), `schedule` (with `interval_sec`: the schedule put, ' +
      'with the scheduler’s note when it rounded the interval), `loading` (status idle), `heartbeat` and `log`.',
    'When a step after registration fails (the scheduler is unavailable), that step is `ok: false` with a ' +
      'one-line `detail`, the other steps still report, and the agent stays created in status `error` with ' +
      '`last_error` saying why; the answer is still 200. `POST /agents/{name}/restart` puts the schedule again.',
    '`template_name` is accepted and named in the log, not stored (`template_slug` is). `monthly_token_budget` ' +
      'is an addition.',
    'Each tick of the schedule (the agent-tick function) holds a lease on the agent, so ticks never overlap; ' +
      'skips when `GET /agent-runs/idle-check` would (the reason is kept as `skip_reason`); otherwise claims the ' +
      'agent’s highest-priority runnable todo task (todo → in_progress, conditional on the task still being ' +
      'todo: two ticks never take one task), runs it with the agent’s identity, soul content and core rules ' +
      '(locally the deterministic local runner; deployed, the organization’s `llm` integration or Bedrock), and ' +
      'in one transaction moves the task to review (or done), keeps the run as the task’s `last_run`, consumes ' +
      'the tokens used and writes the log, activity and changelog entries. A failed run puts the task back to ' +
      'todo with the error in `last_run` (blocked after its third failed run), shows the agent as `error` and ' +
      'sends `agent_error`; nothing is consumed.',
    STATUS_TABLE,
  ].join('\n\n'),
  body: z.object({
    name: agentName,
    display_name: shortText(200).optional(),
    role: shortText(100).optional(),
    emoji: shortText(32).optional(),
    color: hexColor.nullable().optional().meta({ description: '`#rgb` or `#rrggbb`, stored as lowercase `#rrggbb`' }),
    model: shortText(200).optional(),
    interval_sec: intervalSec.optional(),
    identity: promptText.optional().meta({ description: `System prompt, at most ${MAX_PROMPT_TEXT} characters` }),
    soul_content: promptText.optional().meta({ description: 'Markdown rules and scope; sections start with #' }),
    core_rules: promptText.optional().meta({ description: 'Hard constraints, one per line' }),
    tools: names.optional(),
    capabilities: names.optional(),
    config: agentConfig.optional(),
    template_slug: shortText(100).optional(),
    template_name: shortText(200).optional(),
    workspace_path: workspacePath.nullable().optional(),
    monthly_token_budget: monthlyTokenBudget.optional(),
  }),
  response: z.object({ agent: AgentRecord, steps: z.array(StepRecord) }),
  errors: [409],
});

const nameParams = z.object({ name: agentName });
const noteBody = z
  .object({
    note: z.string().trim().max(500).nullable().optional().meta({ description: 'Why; at most 500 characters' }),
  })
  .optional();

const PAST = { stop: 'stopped', start: 'started', restart: 'restarted' } as const;

const controlRoute = (action: 'stop' | 'start' | 'restart', summary: string, description: string) =>
  defineRoute({
    group,
    tags,
    method: 'POST',
    path: `/agents/{name}/${action}`,
    auth: 'bearer',
    summary,
    description: [
      description,
      'The body is optional. An invalid name is a 400, an unknown one a 404. The change, an activity entry ' +
        `(\`agent.${PAST[action]}\`, the note in its metadata) ` +
        'and a log line are written together. Answers `{ data: agent, meta: { action, note } }`. For an agent ' +
        'without a schedule, the steps that touch the scheduler are skipped.',
      STATUS_TABLE,
    ].join('\n\n'),
    params: nameParams,
    body: noteBody,
    response: AgentRecord,
    errors: [404],
  });

export const stopAgent = controlRoute(
  'stop',
  'Stop an agent',
  'Sets the status to `stopped`, disables the schedule (its tick automation becomes `disabled`). A tick of a ' +
    'stopped agent is skipped with `skip_reason` `stopped`.',
);

export const startAgent = controlRoute(
  'start',
  'Start an agent',
  'Sets the status to `idle` (from stopped, offline, error or idle; an `active` agent, mid-run, stays active) ' +
    'and enables the schedule (its tick automation becomes `active`); an agent with an interval but no schedule ' +
    'yet gets one. When the scheduler fails, the agent is left in `error` with `last_error` saying why.',
);

export const restartAgent = controlRoute(
  'restart',
  'Restart an agent',
  'Unloads and reloads: disables the schedule, sets the status to `idle`, clears `last_error`, and enables the ' +
    'schedule again (an agent with an interval but no schedule yet gets one). When the scheduler fails, the ' +
    'agent is left in `error` with `last_error` saying why.',
);

/* The public API: the same records, by id, with the public status words. */

const idParams = z.object({ id: integerId('id') });
const publicStatus = z.enum(PUBLIC_AGENT_STATUSES).meta({ description: `${PUBLIC_AGENT_STATUSES.join(', ')}` });
const role = z.string().trim().min(1).max(100);

export const listPublicAgents = defineRoute({
  group,
  tags: publicTags,
  method: 'GET',
  path: '/v1/public/agents',
  auth: 'bearer',
  summary: 'List agents (public API)',
  description: `Oldest first; filters combine (AND). \`role\` matches exactly, ignoring case.\n\n${STATUS_TABLE}`,
  query: pagingQuery.extend({
    status: valueList(PUBLIC_AGENT_STATUSES, 'status')
      .optional()
      .meta({ description: `Comma-separated public statuses: ${PUBLIC_AGENT_STATUSES.join(', ')}` }),
    role: z.string().max(100).optional(),
  }),
  envelope: 'list',
  response: PublicAgentRecord,
});

export const createPublicAgent = defineRoute({
  group,
  tags: publicTags,
  method: 'POST',
  path: '/v1/public/agents',
  auth: 'bearer',
  summary: 'Create an agent (public API)',
  description:
    '`name` (rules as for POST /agents; 409 when taken) and `role` are required. Creates the same record as ' +
    'POST /agents, without a schedule (the public API takes no interval). `status` (default idle) is the ' +
    `status the agent starts in.\n\n${STATUS_TABLE}`,
  body: z.object({
    name: agentName,
    role,
    emoji: shortText(32).optional(),
    status: publicStatus.optional(),
    workspace_path: workspacePath.nullable().optional(),
  }),
  response: PublicAgentRecord,
  status: 201,
  errors: [409],
});

export const getPublicAgent = defineRoute({
  group,
  tags: publicTags,
  method: 'GET',
  path: '/v1/public/agents/{id}',
  auth: 'bearer',
  summary: 'One agent (public API)',
  description: `An agent of another organization answers 404.\n\n${STATUS_TABLE}`,
  params: idParams,
  response: PublicAgentRecord,
  errors: [404],
});

export const updatePublicAgent = defineRoute({
  group,
  tags: publicTags,
  method: 'PATCH',
  path: '/v1/public/agents/{id}',
  auth: 'bearer',
  summary: 'Update an agent (public API)',
  description:
    'At least one field; `null` clears emoji, current_task and monthly_token_budget (an addition). Setting ' +
    '`paused` (stored `stopped`) or `offline` disables the schedule as POST /agents/{name}/stop does; setting ' +
    'idle, working or blocked on a paused or offline agent enables it again. A PATCH that changes no value ' +
    `writes nothing.\n\n${STATUS_TABLE}`,
  params: idParams,
  body: z
    .object({
      emoji: shortText(32).optional(),
      role: role.optional(),
      status: publicStatus.optional(),
      current_task: shortText(500).optional(),
      workspace_path: workspacePath.optional(),
      monthly_token_budget: monthlyTokenBudget.optional(),
    })
    .refine(
      (body) => Object.values(body).some((value) => value !== undefined),
      'name at least one of emoji, role, status, current_task, workspace_path, monthly_token_budget',
    ),
  response: PublicAgentRecord,
  errors: [404],
});

export const deletePublicAgent = defineRoute({
  group,
  tags: publicTags,
  method: 'DELETE',
  path: '/v1/public/agents/{id}',
  auth: 'bearer',
  summary: 'Take an agent offline (public API; the record stays)',
  description:
    'Sets the status to offline and disables the schedule; the agent stays and can be started again. ' +
    'Answers `{ data: agent, meta: { deleted: false, status: "offline" } }`.',
  params: idParams,
  envelope: 'deleted',
  response: PublicAgentRecord,
  errors: [404],
});
