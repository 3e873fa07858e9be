import * as z from 'zod';
import { AGENT_NAME_MAX, AGENT_NAME_PATTERN } from '#lib/agents/agent-keys';
import { AGENT_STATUSES } from '#lib/agents/agent-status';
import { AUTOMATION_STATUSES } from '#lib/automations/automation-keys';
import { LIVE_STATUSES } from '#lib/automations/automation-view';
import { defineRoute } from '#lib/http/route';
import { pagingQuery, valueList } from '#lib/http/schemas';
import { workspaceRelativePath } from '#lib/routes/path-schemas';
import { integerId } from '#lib/routes/schemas';

/** Automations of the organization's agents: the `automations` function. */

const group = 'automations';
const tags = ['Automations'];

/** The specification's limit on GET /automations `q`. */
export const MAX_AUTOMATION_SEARCH_LENGTH = 100;

const params = z.object({ id: integerId('id') });

const agentName = z
  .string()
  .regex(AGENT_NAME_PATTERN, `lowercase letters, digits and hyphens, starting with a letter, at most ${AGENT_NAME_MAX}`)
  .meta({ description: 'The name of an agent of the organization' });

const automationName = z.string().trim().min(1).max(100);
const automationType = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a word of letters, digits, _ and -, starting with a letter, at most 32')
  .meta({ description: 'What kind of automation (`schedule`, `script`, `hook`…); stored lowercase' });
const label = z.string().trim().max(300).nullable();
const status = z.enum(AUTOMATION_STATUSES);

const LIVE_TABLE = [
  '| live_status | when |',
  '|---|---|',
  '| off | the automation’s own status is inactive or disabled |',
  '| agent_missing | it is active, but the organization has no agent of its agent_name |',
  '| paused | it is active, its agent is stopped or offline |',
  '| failing | it is active, its agent is in error (its last run or schedule failed) |',
  '| running | it is active, its agent is at work now (agent status active) |',
  '| waiting | it is active, its agent is idle between runs |',
].join('\n');

const ABOUT =
  'An automation runs on behalf of one agent. Each agent has a tick automation (`type` schedule, `managed: ' +
  'true`) that the service runs through the agent’s schedule: it is `active` exactly while that schedule is ' +
  'enabled, and it changes by stopping and starting the agent (PATCH and DELETE answer 409). Automations ' +
  'created here are records of what runs elsewhere on the agent’s behalf (`path`: a workspace-relative path, ' +
  'such as a script in the agent’s workspace); the service shows each with its live status, read from its own ' +
  `status and its agent’s state when asked:\n\n${LIVE_TABLE}`;

export const AutomationRecord = z
  .object({
    id: z.number().int().meta({ description: 'Integer id, unique within the organization' }),
    name: z.string(),
    agent_name: z.string(),
    type: z.string(),
    path: z.string(),
    label: z.string().nullable(),
    status: z.enum(AUTOMATION_STATUSES),
    managed: z.boolean().meta({ description: 'A tick automation, changed through its agent only' }),
    live_status: z.enum(LIVE_STATUSES).meta({ description: 'See the table in the route descriptions' }),
    agent_status: z.enum(AGENT_STATUSES).nullable().meta({ description: 'The agent’s stored status; null if missing' }),
    agent_last_run_at: z.string().nullable(),
    schedule_enabled: z
      .boolean()
      .nullable()
      .meta({ description: 'For a tick: whether the agent’s schedule is enabled; null for other automations' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Automation' });

export const listAutomations = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/automations',
  auth: 'bearer',
  summary: 'List the organization’s automations with their live status',
  description:
    'Oldest first. Filters combine (AND); empty values filter nothing. `agent_name`: that agent’s ' +
    'automations. `type`: exactly that type, ignoring case. `status`: the automation’s own status, one or ' +
    'several comma-separated. `q`: part of the name, label, path, agent name or type, ignoring case; at most ' +
    `${MAX_AUTOMATION_SEARCH_LENGTH} characters (longer is 400).\n\n${ABOUT}`,
  query: pagingQuery.extend({
    agent_name: agentName.optional(),
    type: z
      .string()
      .trim()
      .max(32)
      .optional()
      .transform((value) => value || undefined)
      .meta({ description: 'Exact type, ignoring case; empty filters nothing' }),
    status: valueList(AUTOMATION_STATUSES, 'status')
      .optional()
      .meta({
        description: `Comma-separated statuses (${AUTOMATION_STATUSES.join(', ')})`,
      }),
    q: z
      .string()
      .max(MAX_AUTOMATION_SEARCH_LENGTH)
      .optional()
      .meta({ description: `Case-insensitive text, at most ${MAX_AUTOMATION_SEARCH_LENGTH} characters` }),
  }),
  envelope: 'list',
  response: AutomationRecord,
});

export const createAutomation = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/automations',
  auth: 'bearer',
  summary: 'Create an automation for an agent',
  description:
    '`name`, `agent_name`, `type` and `path` are required; `status` defaults to active. `agent_name` must name ' +
    'an agent of the organization (400 otherwise). Names need not be unique. Recorded in the activity log ' +
    `(\`automation.created\`).\n\n${ABOUT}`,
  body: z.object({
    name: automationName,
    agent_name: agentName,
    type: automationType,
    path: workspaceRelativePath,
    label: label.optional(),
    status: status.optional().meta({ description: `${AUTOMATION_STATUSES.join(', ')}; default active` }),
  }),
  response: AutomationRecord,
  status: 201,
});

export const getAutomation = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/automations/{id}',
  auth: 'bearer',
  summary: 'One automation with its live status',
  description: `An automation of another organization answers 404.\n\n${ABOUT}`,
  params,
  response: AutomationRecord,
  errors: [404],
});

export const updateAutomation = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/automations/{id}',
  auth: 'bearer',
  summary: 'Change an automation',
  description:
    'Any of the fields create takes, at least one; `label: null` clears the label. A new `agent_name` must name ' +
    'an agent of the organization (400) and moves the automation to it. A PATCH that changes no value writes ' +
    'nothing; each one that does is recorded (`automation.updated`, `metadata.changed` naming the fields). The ' +
    'change applies to the automation as stored when it is written: a concurrent change is never lost (the ' +
    `write holds only on the version read, and is read again and retried). A tick automation answers 409.\n\n${ABOUT}`,
  params,
  body: z
    .object({
      name: automationName.optional(),
      agent_name: agentName.optional(),
      type: automationType.optional(),
      path: workspaceRelativePath.optional(),
      label: label.optional(),
      status: status.optional(),
    })
    .refine(
      (body) => Object.values(body).some((value) => value !== undefined),
      'name at least one of name, agent_name, type, path, label, status',
    ),
  response: AutomationRecord,
  errors: [404, 409],
});

export const deleteAutomation = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/automations/{id}',
  auth: 'bearer',
  summary: 'Delete an automation',
  description:
    'Answers the automation as it was, with `meta.deleted: true`; recorded as `automation.deleted`. A tick ' +
    'automation answers 409: it goes with its agent.',
  params,
  envelope: 'deleted',
  response: AutomationRecord,
  errors: [404, 409],
});
