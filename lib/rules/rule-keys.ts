import { AGENT_NAME_PATTERN } from '#lib/agents/agent-keys';
import { pad, type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where architectural rules live in the table (access patterns: lib/rules/rule-records.ts). A rule is
 * a constraint agents work under, for every agent of the organization (`universal`) or for one
 * (`agent:<name>`). An organization holds tens to hundreds of them.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | rule | `T#<org>` | `RULE#<id>` | `version` is raised by every write |
 * | … by scope | gsi1 `T#<org>#RULES#<scope>` | `<id>` | a scope's rules, oldest first |
 * | rule count | `T#<org>` | `COUNTER#rules` | the sequence of rule ids |
 *
 * An agent's rules (its own and the universal ones) are two Queries of the scope index, whatever the
 * number of other agents' rules.
 */
export const ruleKeys = {
  byId: (orgId: string, id: number): TableKey => ({ pk: tenantPk(orgId), sk: `RULE#${pad(id)}` }),
  prefix: 'RULE#',
  byScopePk: (orgId: string, scope: string): string => `${tenantPk(orgId)}#RULES#${scope}`,
  counter: 'rules',
};

export const UNIVERSAL = 'universal';

/** `universal`, or `agent:<agent name>` (an agent name as agents have them). */
export const RULE_SCOPE_PATTERN = new RegExp(`^(?:${UNIVERSAL}|agent:${AGENT_NAME_PATTERN.source.slice(1, -1)})$`);

/** The scope of one agent's own rules. */
export const agentScope = (agentName: string): string => `agent:${agentName}`;

export interface RuleFields {
  rule: string;
  scope: string;
  category: string | null;
  permanent: boolean;
}

export interface RuleItem extends TableKey, RuleFields {
  gsi1pk: string;
  gsi1sk: string;
  id: number;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string;
}

/** The index attributes that follow from a rule's scope. */
export const ruleIndexes = (orgId: string, id: number, scope: string) => ({
  gsi1pk: ruleKeys.byScopePk(orgId, scope),
  gsi1sk: pad(id),
});

/** A rule as the API shows it; `agent_name` is the agent of an agent-scoped rule, null for a universal one. */
export interface Rule extends RuleFields {
  id: number;
  agent_name: string | null;
  created_at: string;
  updated_at: string;
}

export const toRule = (item: RuleItem): Rule => ({
  id: item.id,
  rule: item.rule,
  scope: item.scope,
  agent_name: item.scope.startsWith('agent:') ? item.scope.slice('agent:'.length) : null,
  category: item.category ?? null,
  permanent: item.permanent === true,
  created_at: item.created_at,
  updated_at: item.updated_at,
});

/** The rule is as the writer read it (`:version`). */
export const ruleVersionIs = 'version = :version';
