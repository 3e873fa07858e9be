import { activityActor, activityWrites } from '#lib/activity/activity-log';
import type { AgentItem, AgentStatus } from '#lib/agents/agent-keys';
import { agentReplace, getAgentById, getAgentByName } from '#lib/agents/agent-records';
import {
  automationStatusOf,
  automationSync,
  isHalted,
  oneLine,
  putSchedule,
  setScheduleEnabled,
  storedSchedule,
} from '#lib/agents/agent-schedule';
import { type AutomationItem, isTickAutomation } from '#lib/automations/automation-keys';
import { automationsOfAgent } from '#lib/automations/automation-records';
import { pad } from '#lib/db/keys';
import { transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import { logWrite } from '#lib/logs/log-records';
import { agentSearchFields, wordsOf } from '#lib/search/search-fields';
import { postingWrites } from '#lib/search/search-postings';

/**
 * Changing an agent's state and fields, for both APIs: stop, start and restart (operational), PATCH and
 * DELETE (public). Each change is one transaction conditional on the version it read (the agent, its
 * tick automation's status, an activity entry and a log line); when another write got there first, the
 * change reads again and starts over.
 *
 * The Scheduler port is called around that write in one order: a schedule is disabled before the write
 * that halts the agent and enabled after the write that runs it again. Whatever order concurrent stops
 * and starts interleave in, the scheduler is then never left disabled for an agent whose record says it
 * runs; the opposite (enabled for a halted agent) is harmless, since a tick of a halted agent skips.
 */

/** What to do with the agent's schedule: `cycle` is restart's disable-then-enable ("unload, reload"). */
type ScheduleDirective = 'keep' | 'disable' | 'enable' | 'cycle';

type Editable = 'status' | 'emoji' | 'role' | 'current_task' | 'workspace_path' | 'monthly_token_budget' | 'last_error';

interface PlannedChange {
  fields: Partial<Pick<AgentItem, Editable>>;
  schedule: ScheduleDirective;
  /** The activity entry's action, e.g. `agent.stopped`. */
  action: string;
  metadata: Record<string, unknown>;
  message: string;
}

export interface ChangedAgent {
  item: AgentItem;
  automations: AutomationItem[];
}

type Locator = { name: string } | { id: number };

const WRITE_ATTEMPTS = 4;

export const agentNotFound = () => new NotFoundError('Agent not found');

export type AgentAction = 'stop' | 'start' | 'restart';

const PAST: Record<AgentAction, string> = { stop: 'stopped', start: 'started', restart: 'restarted' };

/**
 * POST /agents/{name}/stop|start|restart. Stop sets `stopped` and disables the schedule; start sets
 * `idle` (an `active` agent, mid-run, stays active) and enables it; restart disables and enables it
 * again, sets `idle` and clears `last_error`. Start and restart put the schedule of an agent that has
 * an interval but none yet (its creation's scheduler step failed).
 */
export function controlAgent(
  ctx: RequestContext,
  name: string,
  action: AgentAction,
  note: string | null,
): Promise<ChangedAgent> {
  return changeAgent(ctx, { name }, (before) => {
    const status: AgentStatus =
      action === 'stop' ? 'stopped' : action === 'start' && before.status === 'active' ? 'active' : 'idle';
    return {
      fields: { status, ...(action === 'restart' ? { last_error: null } : {}) },
      schedule: action === 'stop' ? 'disable' : action === 'start' ? 'enable' : 'cycle',
      action: `agent.${PAST[action]}`,
      metadata: { name, note, from: before.status, to: status },
      message: `agent ${name} ${PAST[action]}${note ? `: ${note}` : ''}`,
    };
  });
}

export interface PublicAgentChanges {
  emoji?: string | null | undefined;
  role?: string | undefined;
  status?: AgentStatus | undefined;
  current_task?: string | null | undefined;
  workspace_path?: string | undefined;
  monthly_token_budget?: number | null | undefined;
}

/**
 * PATCH /v1/public/agents/{id}. A status that halts the agent (`paused` = stopped, `offline`) disables
 * its schedule as stop does; leaving those for a running status enables it again. A PATCH that changes
 * no value writes nothing.
 */
export function updateAgent(ctx: RequestContext, id: number, changes: PublicAgentChanges): Promise<ChangedAgent> {
  return changeAgent(ctx, { id }, (before) => {
    const fields = Object.fromEntries(
      Object.entries(changes).filter(
        ([key, value]) => value !== undefined && value !== (before[key as keyof AgentItem] ?? null),
      ),
    ) as PlannedChange['fields'];
    const changed = Object.keys(fields);
    if (changed.length === 0) return null;
    const status = fields.status ?? before.status;
    const halts = isHalted(status) && !isHalted(before.status);
    const resumes = !isHalted(status) && isHalted(before.status);
    return {
      fields,
      schedule: halts ? 'disable' : resumes ? 'enable' : 'keep',
      action: 'agent.updated',
      metadata: { name: before.name, changed, ...(fields.status ? { from: before.status, to: status } : {}) },
      message: `agent ${before.name} updated: ${changed.join(', ')}`,
    };
  });
}

/** DELETE /v1/public/agents/{id}: the record stays, `offline`, its schedule disabled. */
export function retireAgent(ctx: RequestContext, id: number): Promise<ChangedAgent> {
  return changeAgent(ctx, { id }, (before) =>
    before.status === 'offline' && !before.schedule?.enabled
      ? null
      : {
          fields: { status: 'offline' },
          schedule: 'disable',
          action: 'agent.offline',
          metadata: { name: before.name, from: before.status, to: 'offline' },
          message: `agent ${before.name} taken offline`,
        },
  );
}

async function changeAgent(
  ctx: RequestContext,
  locator: Locator,
  plan: (before: AgentItem) => PlannedChange | null,
): Promise<ChangedAgent> {
  const principal = requirePrincipal(ctx);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await changeOnce(ctx, principal, locator, plan);
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt >= WRITE_ATTEMPTS) {
        throw new ConflictError('The agent kept changing while this change was applied; try again');
      }
    }
  }
}

async function changeOnce(
  ctx: RequestContext,
  principal: Principal,
  locator: Locator,
  plan: (before: AgentItem) => PlannedChange | null,
): Promise<ChangedAgent> {
  const orgId = principal.orgId;
  const before =
    'name' in locator
      ? await getAgentByName({ orgId, name: locator.name, consistent: true })
      : await getAgentById({ orgId, id: locator.id, consistent: true });
  if (!before) throw agentNotFound();
  const automations = await automationsOfAgent(orgId, before.name);
  const change = plan(before);
  if (!change) return { item: before, automations };

  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  let status = change.fields.status ?? before.status;
  let schedule = before.schedule;
  let problem: string | undefined;
  let enableAfter = false;

  if (schedule && (change.schedule === 'disable' || change.schedule === 'cycle')) {
    try {
      await setScheduleEnabled(ctx, orgId, before, false);
      schedule = { ...schedule, enabled: false };
    } catch (error) {
      problem = `schedule could not be disabled: ${oneLine(error)}`;
    }
  }
  if ((change.schedule === 'enable' || change.schedule === 'cycle') && !isHalted(status)) {
    if (schedule) {
      enableAfter = true;
      schedule = { ...schedule, enabled: true };
    } else if (before.interval_sec !== null && before.interval_sec !== undefined) {
      // Its answer is recorded, so a schedule never made is put before the write.
      try {
        const state = await putSchedule(ctx, orgId, { id: before.id, interval_sec: before.interval_sec }, true);
        schedule = storedSchedule(state, at);
      } catch (error) {
        problem = `schedule: ${oneLine(error)}`;
        status = 'error';
      }
    }
  }

  const after: AgentItem = {
    ...before,
    ...change.fields,
    status,
    schedule,
    last_error: problem ?? (change.fields.last_error === undefined ? before.last_error : change.fields.last_error),
    version: before.version + 1,
    updated_at: at,
  };
  await transact([
    agentReplace(after, before.version),
    ...automationSync(orgId, after, automations, at),
    ...activityWrites(
      orgId,
      {
        ...activityActor(principal),
        action: change.action,
        entity_type: 'agent',
        entity_id: String(before.id),
        metadata: { ...change.metadata, ...(problem ? { problem } : {}) },
      },
      now,
    ),
    logWrite(
      orgId,
      {
        agent: before.name,
        level: problem ? 'warn' : 'info',
        message: problem ? `${change.message} (${problem})` : change.message,
        meta: { action: change.action },
      },
      now,
    ),
    // A new role moves the agent's search postings; the version condition keeps them exact.
    ...postingWrites({
      orgId,
      kind: 'agent',
      ref: pad(before.id),
      before: wordsOf(agentSearchFields(before)),
      after: wordsOf(agentSearchFields(after)),
    }),
  ]);
  const synced = withTickStatus(automations, after);
  if (!enableAfter) return { item: after, automations: synced };

  try {
    await setScheduleEnabled(ctx, orgId, after, true);
    return { item: after, automations: synced };
  } catch (error) {
    return enableFailed(ctx, orgId, after, synced, oneLine(error));
  }
}

/** The agent's automations as they are once its tick automation follows `agent`'s schedule. */
const withTickStatus = (automations: AutomationItem[], agent: AgentItem): AutomationItem[] =>
  automations.map((automation) =>
    isTickAutomation(automation) ? { ...automation, status: automationStatusOf(agent.schedule) } : automation,
  );

/**
 * The schedule could not be enabled after the write that set the agent running: the agent is left in
 * `error` with its schedule disabled, unless another request has changed it since (its own scheduler
 * calls then decided).
 */
async function enableFailed(
  ctx: RequestContext,
  orgId: string,
  agent: AgentItem,
  automations: AutomationItem[],
  reason: string,
): Promise<ChangedAgent> {
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const failed: AgentItem = {
    ...agent,
    status: 'error',
    schedule: agent.schedule ? { ...agent.schedule, enabled: false } : null,
    last_error: `schedule could not be enabled: ${reason}`,
    version: agent.version + 1,
    updated_at: at,
  };
  try {
    await transact([
      agentReplace(failed, agent.version),
      ...automationSync(orgId, failed, automations, at),
      logWrite(orgId, { agent: agent.name, level: 'error', message: `agent ${agent.name}: ${failed.last_error}` }, now),
    ]);
    return { item: failed, automations: withTickStatus(automations, failed) };
  } catch (error) {
    if (!isConditionFailed(error, 'stale')) throw error;
    const fresh = await getAgentById({ orgId, id: agent.id, consistent: true });
    if (!fresh) throw agentNotFound();
    return { item: fresh, automations: await automationsOfAgent(orgId, fresh.name) };
  }
}
