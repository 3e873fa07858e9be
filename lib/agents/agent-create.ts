import { activityActor, activityWrites } from '#lib/activity/activity-log';
import {
  type AgentConfigFields,
  type AgentItem,
  type AgentStatus,
  agentKeys,
  initialAgentState,
} from '#lib/agents/agent-keys';
import { agentReplace, getAgentById, getAgentByName, newAgentPuts, nextAgentId } from '#lib/agents/agent-records';
import {
  automationStatusOf,
  automationSync,
  isHalted,
  oneLine,
  putSchedule,
  setScheduleEnabled,
  storedSchedule,
} from '#lib/agents/agent-schedule';
import type { AutomationItem } from '#lib/automations/automation-keys';
import { agentTickAutomation, newAutomationWrites, nextAutomationId } from '#lib/automations/automation-records';
import { pad } from '#lib/db/keys';
import { transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { type LogLine, logWrite } from '#lib/logs/log-records';
import { instanceTotalsWrite } from '#lib/metrics/metric-records';
import { agentSearchFields, wordsOf } from '#lib/search/search-fields';
import { postingWrites } from '#lib/search/search-postings';

/**
 * Creating an agent (POST /agents and POST /v1/public/agents): the bootstrap, reported step by step.
 *
 * 1. One transaction registers the agent (status `offline` until loaded) with its name guard, its tick
 *    automation (disabled until scheduled), its search postings, the `agent.created` activity entry and
 *    a log line. A name in use is a 409 here and nothing is written; the workspace, rules and run
 *    configuration the next steps report are fields of that record.
 * 2. With an interval, the Scheduler port puts the agent's schedule.
 * 3. A second write loads the agent: its status (idle, or as asked), heartbeat, schedule and automation
 *    status, and a log line with the outcome. When the scheduler failed, the agent is left in `error`
 *    with `last_error` saying why, and the answer still reports every step (restart retries the schedule).
 */

export interface NewAgent extends Partial<Omit<AgentConfigFields, 'tools' | 'capabilities' | 'config'>> {
  name: string;
  tools?: string[] | undefined;
  capabilities?: string[] | undefined;
  config?: Record<string, unknown> | undefined;
  /** A template's display name, when the body came from applying one: named in the log, not stored. */
  template_name?: string | null | undefined;
  /** The status once loaded (the public create may ask for one); default idle. */
  status?: AgentStatus | undefined;
}

export interface BootstrapStep {
  step: string;
  ok: boolean;
  detail: string;
}

export interface CreatedAgent {
  item: AgentItem;
  automations: AutomationItem[];
  steps: BootstrapStep[];
}

export const STEP_NAMES = [
  'registration',
  'workspace',
  'rules',
  'run_configuration',
  'automations',
  'schedule',
  'loading',
  'heartbeat',
  'log',
] as const;

const LOAD_ATTEMPTS = 4;

export const agentNameTaken = () =>
  new ConflictError('An agent with this name exists', [{ path: 'name', message: 'is taken' }]);

export const defaultWorkspace = (name: string): string => `agents/${name}`;

export async function createAgent(ctx: RequestContext, input: NewAgent): Promise<CreatedAgent> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  // Saves the counters a number when the name is plainly taken; the transaction below is what makes it safe.
  if (await getAgentByName({ orgId, name: input.name })) throw agentNameTaken();
  const [id, automationId] = await Promise.all([nextAgentId(orgId), nextAutomationId(orgId)]);

  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const actor = activityActor(principal);
  const registered: AgentItem = {
    ...agentKeys.byId(orgId, id),
    id,
    name: input.name,
    ...configFields(input),
    ...initialAgentState('offline'),
    created_at: at,
    updated_at: at,
    created_by: actor.actor_id,
  };
  const automation = agentTickAutomation({ orgId, id: automationId, agentName: input.name, status: 'disabled', at });
  const template = input.template_name ?? input.template_slug ?? null;
  try {
    await transact([
      ...newAgentPuts(registered, orgId),
      ...newAutomationWrites(orgId, automation),
      instanceTotalsWrite({ agents: 1 }),
      ...activityWrites(
        orgId,
        {
          ...actor,
          action: 'agent.created',
          entity_type: 'agent',
          entity_id: String(id),
          metadata: { name: input.name, template_slug: registered.template_slug, template_name: input.template_name },
        },
        now,
      ),
      logWrite(orgId, { agent: input.name, level: 'info', message: `agent ${input.name} registered (#${id})` }, now),
      ...postingWrites({ orgId, kind: 'agent', ref: pad(id), after: wordsOf(agentSearchFields(registered)) }),
    ]);
  } catch (error) {
    throw isConditionFailed(error, 'name-taken') ? agentNameTaken() : error;
  }

  const wanted = input.status ?? 'idle';
  let schedule: AgentItem['schedule'] = null;
  let failure: string | undefined;
  if (registered.interval_sec !== null) {
    try {
      const state = await putSchedule(ctx, orgId, { id, interval_sec: registered.interval_sec }, !isHalted(wanted));
      schedule = storedSchedule(state, at);
    } catch (error) {
      failure = oneLine(error);
    }
  }
  const status: AgentStatus = failure ? 'error' : wanted;
  const log: LogLine = failure
    ? { agent: input.name, level: 'error', message: `agent ${input.name} not loaded: schedule failed: ${failure}` }
    : { agent: input.name, level: 'info', message: `agent ${input.name} loaded: ${status}, ${runsEvery(schedule)}` };
  const loaded = await load(ctx, orgId, registered, automation, {
    status,
    schedule,
    lastError: failure ? `schedule: ${failure}` : null,
    log,
  });

  const steps: BootstrapStep[] = [
    ok('registration', `agent #${id} ${input.name} registered${template ? ` from template ${template}` : ''}`),
    ok('workspace', `workspace ${registered.workspace_path}`),
    ok('rules', rulesDetail(registered)),
    ok('run_configuration', runDetail(registered)),
    ok('automations', `tick automation ${automation.name} (#${automationId}), ${automationStatusOf(loaded.schedule)}`),
    scheduleStep(registered.interval_sec, schedule, failure),
    failure
      ? { step: 'loading', ok: false, detail: 'status error: the schedule could not be set up' }
      : ok('loading', `status ${loaded.status}`),
    ok('heartbeat', `last_heartbeat ${loaded.last_heartbeat}`),
    ok('log', `logged: ${log.message}`),
  ];
  return { item: loaded, automations: [{ ...automation, status: automationStatusOf(loaded.schedule) }], steps };
}

function configFields(input: NewAgent): AgentConfigFields {
  return {
    display_name: input.display_name ?? null,
    role: input.role ?? null,
    emoji: input.emoji ?? null,
    color: input.color ?? null,
    model: input.model ?? null,
    interval_sec: input.interval_sec ?? null,
    identity: input.identity ?? null,
    soul_content: input.soul_content ?? null,
    core_rules: input.core_rules ?? null,
    tools: [...(input.tools ?? [])],
    capabilities: [...(input.capabilities ?? [])],
    config: { ...(input.config ?? {}) },
    template_slug: input.template_slug ?? null,
    workspace_path: input.workspace_path ?? defaultWorkspace(input.name),
    monthly_token_budget: input.monthly_token_budget ?? null,
  };
}

/**
 * The second write. A request that changed the agent since registration (a stop, say) wins: its status
 * stays, and a schedule this create enabled is disabled again so that it matches a halted status.
 */
async function load(
  ctx: RequestContext,
  orgId: string,
  registered: AgentItem,
  automation: AutomationItem,
  outcome: { status: AgentStatus; schedule: AgentItem['schedule']; lastError: string | null; log: LogLine },
): Promise<AgentItem> {
  let current = registered;
  let schedule = outcome.schedule;
  for (let attempt = 1; ; attempt += 1) {
    const now = ctx.ports.clock.now();
    const at = now.toISOString();
    const changedMeanwhile = current.version !== registered.version;
    const status = changedMeanwhile ? current.status : outcome.status;
    if (schedule?.enabled && isHalted(status)) {
      // Best effort: were it to fail, the tick of a halted agent skips its run anyway.
      const disabled = await setScheduleEnabled(ctx, orgId, current, false).then(
        () => true,
        () => false,
      );
      if (disabled) schedule = { ...schedule, enabled: false };
    }
    const loaded: AgentItem = {
      ...current,
      status,
      schedule,
      last_heartbeat: at,
      last_error: changedMeanwhile ? current.last_error : outcome.lastError,
      version: current.version + 1,
      updated_at: at,
    };
    const automations = [{ ...automation, status: automationStatusOf(current.schedule) }];
    try {
      await transact([
        agentReplace(loaded, current.version),
        ...automationSync(orgId, loaded, automations, at),
        logWrite(orgId, outcome.log, now),
      ]);
      return loaded;
    } catch (error) {
      if (!isConditionFailed(error, 'stale') || attempt >= LOAD_ATTEMPTS) throw error;
      const fresh = await getAgentById({ orgId, id: registered.id, consistent: true });
      if (!fresh) throw error;
      current = fresh;
    }
  }
}

const ok = (step: string, detail: string): BootstrapStep => ({ step, ok: true, detail });

const countLines = (text: string | null): number =>
  (text ?? '').split('\n').filter((line) => line.trim() !== '').length;

/** Markdown sections: one per heading, or one for text without headings. */
function countSections(text: string | null): number {
  const body = (text ?? '').trim();
  if (body === '') return 0;
  const headings = body.split('\n').filter((line) => /^#{1,6}\s/.test(line)).length;
  return Math.max(1, headings);
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

function rulesDetail(agent: AgentItem): string {
  const identity = agent.identity ? `identity of ${plural(agent.identity.length, 'character')}` : 'no identity';
  return [
    `${plural(countLines(agent.core_rules), 'core rule line')}`,
    `${plural(countSections(agent.soul_content), 'soul section')}`,
    identity,
    plural(agent.tools.length, 'tool'),
  ].join(', ');
}

function runDetail(agent: AgentItem): string {
  const completeTo = agent.config.complete_to === 'done' ? 'done' : 'review';
  return [
    `model ${agent.model ?? "(the runner's default)"}`,
    agent.interval_sec === null ? 'no interval' : `every ${agent.interval_sec} s`,
    `finished tasks go to ${completeTo}`,
    agent.monthly_token_budget === null ? 'no monthly budget' : `${agent.monthly_token_budget} tokens a month`,
  ].join(', ');
}

const runsEvery = (schedule: AgentItem['schedule']): string =>
  schedule ? `${schedule.expression}${schedule.enabled ? '' : ' (disabled)'}` : 'runs only when asked';

function scheduleStep(
  intervalSec: number | null,
  schedule: AgentItem['schedule'],
  failure: string | undefined,
): BootstrapStep {
  if (failure) return { step: 'schedule', ok: false, detail: `scheduler failed: ${failure}` };
  if (intervalSec === null || !schedule) return ok('schedule', 'no interval_sec: runs only when asked');
  const state = `${schedule.expression}, ${schedule.enabled ? 'enabled' : 'disabled'}`;
  return ok('schedule', schedule.note ? `${state}; ${schedule.note}` : state);
}
