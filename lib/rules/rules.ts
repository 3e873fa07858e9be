import { activityActor, activityWrites } from '#lib/activity/activity-log';
import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { ConflictError, ForbiddenError, isConditionFailed, NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import {
  agentScope,
  type Rule,
  type RuleFields,
  type RuleItem,
  ruleIndexes,
  ruleKeys,
  toRule,
  UNIVERSAL,
} from '#lib/rules/rule-keys';
import {
  allRules,
  getRuleItem,
  newRulePut,
  nextRuleId,
  ruleDelete,
  ruleReplace,
  rulesOfScope,
} from '#lib/rules/rule-records';

/**
 * Architectural rules: GET, POST /rules, PATCH and DELETE /rules/{id}. Each change lands in one
 * transaction with its activity entry; changes and deletes hold only on the version read and are read
 * again and retried when another write landed in between.
 *
 * A permanent rule stays: deleting it is 403, and so is a PATCH that would make it not permanent (else
 * the 403 would be one PATCH away). Its text, scope and category may still be corrected.
 */

export const ruleNotFound = () => new NotFoundError('Rule not found');

export interface RuleFilter {
  scope?: string | undefined;
  /** An agent's rules: its own (`agent:<name>`) and the universal ones. */
  agent?: string | undefined;
  category?: string | undefined;
  permanent?: boolean | undefined;
}

/** The scopes a filter reads from the scope index, or undefined to read every rule. */
function scopesOf(filter: RuleFilter): string[] | undefined {
  if (filter.agent === undefined) return filter.scope === undefined ? undefined : [filter.scope];
  const ofAgent = [UNIVERSAL, agentScope(filter.agent)];
  return filter.scope === undefined ? ofAgent : ofAgent.filter((scope) => scope === filter.scope);
}

/**
 * GET /rules, oldest first. `scope` and `agent` read their scopes from the scope index (`agent`: two
 * Queries, the agent's own rules and the universal ones); otherwise the organization's rules are read in
 * one Query. `category` (ignoring case) and `permanent` filter what was read.
 */
export async function listRules(ctx: RequestContext, filter: RuleFilter, page: PageRequest): Promise<Page<Rule>> {
  const { orgId } = requirePrincipal(ctx);
  const scopes = scopesOf(filter);
  const read = scopes
    ? (await Promise.all(scopes.map((scope) => rulesOfScope(orgId, scope)))).flat()
    : await allRules(orgId);
  const category = filter.category?.toLowerCase();
  const found = read
    .filter(
      (item) =>
        (category === undefined || (item.category ?? '').toLowerCase() === category) &&
        (filter.permanent === undefined || (item.permanent === true) === filter.permanent),
    )
    .sort((a, b) => a.id - b.id);
  return { items: found.slice(page.offset, page.offset + page.limit).map(toRule), total: found.length };
}

async function requireRule(orgId: string, id: number): Promise<RuleItem> {
  const item = await getRuleItem(orgId, id);
  if (!item) throw ruleNotFound();
  return item;
}

const activity = (principal: Principal, action: string, id: number, metadata: Record<string, unknown>) => ({
  ...activityActor(principal),
  action,
  entity_type: 'rule',
  entity_id: String(id),
  metadata,
});

export interface NewRule {
  rule: string;
  scope?: string | undefined;
  category?: string | null | undefined;
  permanent?: boolean | undefined;
}

/** POST /rules: `scope` defaults to universal, `permanent` to false. */
export async function createRule(ctx: RequestContext, input: NewRule): Promise<Rule> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const id = await nextRuleId(orgId);
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const scope = input.scope ?? UNIVERSAL;
  const actor = activityActor(principal);
  const item: RuleItem = {
    ...ruleKeys.byId(orgId, id),
    ...ruleIndexes(orgId, id, scope),
    id,
    rule: input.rule,
    scope,
    category: input.category ?? null,
    permanent: input.permanent ?? false,
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actor.actor_id,
  };
  await transact([
    newRulePut(item),
    ...activityWrites(orgId, activity(principal, 'rule.created', id, { scope, permanent: item.permanent }), now),
  ]);
  return toRule(item);
}

const WRITE_ATTEMPTS = 3;
const CHANGEABLE = ['rule', 'scope', 'category', 'permanent'] as const;
export type RuleChanges = Partial<Omit<NewRule, 'category'> & { category: string | null }>;

const stillPermanent = () =>
  new ForbiddenError('A permanent rule stays permanent: it can be corrected, not made deletable');

/** PATCH /rules/{id}: the fields given; one that changes nothing writes nothing. */
export async function updateRule(ctx: RequestContext, id: number, changes: RuleChanges): Promise<Rule> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 1; ; attempt += 1) {
    const before = await requireRule(orgId, id);
    const changed = Object.fromEntries(
      CHANGEABLE.filter((field) => changes[field] !== undefined && changes[field] !== (before[field] ?? null)).map(
        (field) => [field, changes[field]],
      ),
    ) as Partial<RuleFields>;
    if (before.permanent && changed.permanent === false) throw stillPermanent();
    const fields = Object.keys(changed);
    if (fields.length === 0) return toRule(before);

    const now = ctx.ports.clock.now();
    const scope = changed.scope ?? before.scope;
    const after: RuleItem = {
      ...before,
      ...changed,
      ...ruleIndexes(orgId, id, scope),
      version: before.version + 1,
      updated_at: now.toISOString(),
    };
    try {
      await transact([
        ruleReplace(after, before.version),
        ...activityWrites(orgId, activity(principal, 'rule.updated', id, { changed: fields }), now),
      ]);
      return toRule(after);
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt >= WRITE_ATTEMPTS) throw new ConflictError('The rule kept changing meanwhile; try again');
    }
  }
}

/** DELETE /rules/{id}: 403 for a permanent rule; answers the rule as it was. */
export async function deleteRule(ctx: RequestContext, id: number): Promise<Rule> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 1; ; attempt += 1) {
    const before = await requireRule(orgId, id);
    if (before.permanent) throw new ForbiddenError('A permanent rule cannot be deleted');
    try {
      await transact([
        ruleDelete(orgId, id, before.version),
        ...activityWrites(
          orgId,
          activity(principal, 'rule.deleted', id, { scope: before.scope }),
          ctx.ports.clock.now(),
        ),
      ]);
      return toRule(before);
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt >= WRITE_ATTEMPTS) throw new ConflictError('The rule kept changing meanwhile; try again');
    }
  }
}
