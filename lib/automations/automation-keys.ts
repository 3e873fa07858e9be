import { pad, type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where automations live in the table (writes and reads: lib/automations/automation-records.ts). An
 * automation is something that runs without being asked each time, on behalf of one agent. Each agent
 * has one the service itself runs, its tick; the others are recorded through /automations (a script in
 * the agent's workspace, a hook) and shown with their agent's state. Keyed by the agent's name (fixed
 * at creation), so an agent's automations are one Query.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | tick automation | `T#<org>` | `AUTOMATION#<agent name>#tick` | the agent's scheduled run; follows the agent |
 * | automation | `T#<org>` | `AUTOMATION#<agent name>#<id>` | created by POST /automations; `version` |
 * | id pointer | `T#<org>` | `AUTOMATIONID#<id>` | `automation_sk`: GET /automations/{id} in two reads |
 * | automation count | `T#<org>` | `COUNTER#automations` | the sequence of automation ids |
 *
 * `AUTOMATIONID#` keys do not begin with `AUTOMATION#`, so the automations' range holds automations only.
 * Tick automations written before id pointers existed have none; they are found by id with one Query of
 * the organization's automations.
 */
export const automationKeys = {
  tick: (orgId: string, agentName: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `AUTOMATION#${agentName}#tick`,
  }),
  /** An automation created through the API, under its agent. */
  ofAgentById: (orgId: string, agentName: string, id: number): TableKey => ({
    pk: tenantPk(orgId),
    sk: `AUTOMATION#${agentName}#${pad(id)}`,
  }),
  idPointer: (orgId: string, id: number): TableKey => ({ pk: tenantPk(orgId), sk: `AUTOMATIONID#${pad(id)}` }),
  /** Every automation of the organization begins with this; one agent's with `ofAgent`. */
  prefix: 'AUTOMATION#',
  ofAgent: (agentName: string): string => `AUTOMATION#${agentName}#`,
  counter: 'automations',
};

/** The tick automation is the one the agent's own schedule runs: its sort key ends in `#tick`. */
export const isTickAutomation = (item: Pick<AutomationItem, 'sk'>): boolean => item.sk.endsWith('#tick');

/**
 * The automation's own status: `active` while it runs; `inactive` while its owner has paused it (it is
 * meant to come back); `disabled` while it is switched off. A tick automation is `active` exactly while
 * its agent's schedule is enabled, `disabled` otherwise (the agent is stopped or offline, or has no
 * interval and runs only when asked).
 */
export const AUTOMATION_STATUSES = ['active', 'inactive', 'disabled'] as const;
export type AutomationStatus = (typeof AUTOMATION_STATUSES)[number];

export interface AutomationItem extends TableKey {
  id: number;
  /** `<agent>-tick` for a tick. */
  name: string;
  agent_name: string;
  /** `schedule` for a tick; a lowercase word of the creator's choosing otherwise. */
  type: string;
  /** What the automation runs: a workspace-relative path (`functions/schedule/agent-tick` for a tick). */
  path: string;
  label: string | null;
  status: AutomationStatus;
  /** Raised by every write of an automation created through the API; ticks follow their agent and have none. */
  version?: number;
  created_at: string;
  updated_at: string;
  created_by?: string;
}

export interface AutomationPointerItem extends TableKey {
  automation_sk: string;
}

/** The automation is as the writer read it (`:version`). */
export const automationVersionIs = 'version = :version';
/** The pointer still names the automation's key as read (`:sk`). */
export const pointerNames = 'automation_sk = :sk';

/** An automation as an agent shows it. */
export interface AutomationSummary {
  id: number;
  name: string;
  type: string;
  status: AutomationStatus;
}

export const toAutomationSummary = (item: AutomationItem): AutomationSummary => ({
  id: item.id,
  name: item.name,
  type: item.type,
  status: item.status,
});
