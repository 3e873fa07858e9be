import { pad, type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where agents live in the table (writes and reads: lib/agents/agent-records.ts). One agent record
 * serves the operational API (by name) and the public API (by id).
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | agent | `T#<org>` | `AGENT#<id>` | `version` is raised by every write |
 * | name | `T#<org>` | `AGENTNAME#<name>` | `agent_id`; makes a name unique in the organization |
 * | tick lease | `T#<org>` | `AGENTLEASE#<id>` | `holder`, `lease_until` (epoch ms); one running tick per agent |
 * | agent count | `T#<org>` | `COUNTER#agents` | the sequence of agent ids |
 *
 * Names are fixed at creation: the operational API addresses an agent by name, the public one by id.
 */
export const agentKeys = {
  byId: (orgId: string, id: number): TableKey => ({ pk: tenantPk(orgId), sk: `AGENT#${pad(id)}` }),
  prefix: 'AGENT#',
  byName: (orgId: string, name: string): TableKey => ({ pk: tenantPk(orgId), sk: `AGENTNAME#${name}` }),
  lease: (orgId: string, id: number): TableKey => ({ pk: tenantPk(orgId), sk: `AGENTLEASE#${pad(id)}` }),
  counter: 'agents',
};

/** The name of an agent's schedule (EventBridge: at most 64 of `[0-9A-Za-z._-]`). */
export const agentScheduleName = (orgId: string, id: number): string => `agent-${orgId}-${id}`;

/**
 * The stored status: the operational values, plus `stopped` (set by stop). The public API shows and
 * takes its own vocabulary, mapped one to one (lib/agents/agent-status.ts).
 */
export type AgentStatus = 'active' | 'idle' | 'offline' | 'error' | 'stopped';

/** The schedule as the agent shows it; `next_runs` is computed when shown. */
export interface AgentSchedule {
  expression: string;
  enabled: boolean;
  /** Seconds between ticks as the scheduler runs them. */
  interval_sec: number;
  /** Ticks fall on `anchor_at + k × interval_sec`. */
  anchor_at: string;
  note: string | null;
}

/** The agent's configuration: what create takes (and a template's apply answers). */
export interface AgentConfigFields {
  display_name: string | null;
  role: string | null;
  emoji: string | null;
  color: string | null;
  model: string | null;
  interval_sec: number | null;
  identity: string | null;
  soul_content: string | null;
  core_rules: string | null;
  tools: string[];
  capabilities: string[];
  /** Free-form settings; `complete_to: 'done'` makes a finished task done instead of review. */
  config: Record<string, unknown>;
  template_slug: string | null;
  workspace_path: string | null;
  /** Tokens the agent may use per calendar month (UTC); null for no budget. */
  monthly_token_budget: number | null;
}

export interface AgentItem extends AgentConfigFields {
  pk: string;
  sk: string;
  id: number;
  name: string;
  status: AgentStatus;
  current_task: string | null;
  /**
   * The task a tick claimed and has not yet finished, written with the claim: a tick that finds it set
   * knows the previous one stopped mid-run (crash, timeout) and puts the task back.
   */
  running_task_id?: number | null;
  schedule: AgentSchedule | null;
  /** The month (`YYYY-MM`, UTC) `budget_used` counts, and the tokens used in it. */
  budget_month: string | null;
  budget_used: number;
  last_heartbeat: string | null;
  last_run_at: string | null;
  last_error: string | null;
  /** Why the last tick was skipped (`stopped`, `no_task`, `insufficient_balance`, `budget_exhausted`), if it was. */
  skip_reason: string | null;
  tasks_completed: number;
  tasks_failed: number;
  tokens_used: number;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string;
}

/** The state a new agent starts from: no runs, no schedule yet, version 1; `status` as registered. */
export const initialAgentState = (status: AgentStatus) => ({
  status,
  current_task: null,
  schedule: null,
  budget_month: null,
  budget_used: 0,
  last_heartbeat: null,
  last_run_at: null,
  last_error: null,
  skip_reason: null,
  tasks_completed: 0,
  tasks_failed: 0,
  tokens_used: 0,
  version: 1,
});

export interface AgentNameItem extends TableKey {
  agent_id: number;
}

export interface LeaseItem extends TableKey {
  holder: string;
  /** Epoch milliseconds after which another tick may take the lease. */
  lease_until: number;
  /** Epoch seconds (the table's TTL attribute): DynamoDB removes a lease a crash left behind. */
  expires_at: number;
}

/** The agent is as the writer read it (`:version`). */
export const agentVersionIs = 'version = :version';
/** The lease is free: never taken, released, or expired before `:now`. */
export const leaseFree = 'attribute_not_exists(pk) OR lease_until < :now';
/** The lease is still `:holder`'s. */
export const leaseHeldBy = 'holder = :holder';

/**
 * An agent's name: lowercase letters, digits and hyphens, starting with a letter, at most 40 characters.
 * It is fixed at creation and appears in paths and sort keys (`AGENTNAME#<name>`, `AUTOMATION#<name>#tick`),
 * which is why it can hold no `#`, `/` or upper case.
 */
export const AGENT_NAME_PATTERN = /^[a-z][a-z0-9-]{0,39}$/;
export const AGENT_NAME_MAX = 40;
