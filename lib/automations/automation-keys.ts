import { type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where automations live in the table (writes and reads: lib/automations/automation-records.ts). An
 * automation is something that runs without being asked each time; today each agent has one, its tick.
 * Keyed by the agent's name (fixed at creation), so an agent's automations are one Query.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | automation | `T#<org>` | `AUTOMATION#<agent name>#<kind>` | kind `tick`: the agent's scheduled run |
 * | automation count | `T#<org>` | `COUNTER#automations` | the sequence of automation ids |
 */
export const automationKeys = {
  tick: (orgId: string, agentName: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `AUTOMATION#${agentName}#tick`,
  }),
  /** Every automation of the organization begins with this; one agent's with `ofAgent`. */
  prefix: 'AUTOMATION#',
  ofAgent: (agentName: string): string => `AUTOMATION#${agentName}#`,
  counter: 'automations',
};

/**
 * `active` while the scheduler runs it; `disabled` while it does not (the agent is stopped or offline,
 * or has no interval and runs only when asked). `inactive` is the specification's third value, kept
 * for automations of other kinds.
 */
export type AutomationStatus = 'active' | 'inactive' | 'disabled';

export interface AutomationItem extends TableKey {
  id: number;
  /** `<agent>-tick`. */
  name: string;
  agent_name: string;
  type: 'schedule';
  /** The function the automation runs. */
  path: string;
  label: string;
  status: AutomationStatus;
  created_at: string;
  updated_at: string;
}

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
