import * as z from 'zod';
import { AGENT_NAME_MAX, AGENT_NAME_PATTERN } from '#lib/agents/agent-keys';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { integerId } from '#lib/routes/schemas';
import { RULE_SCOPE_PATTERN } from '#lib/rules/rule-keys';

/** The organization's architectural rules: the `rules` function. */

const group = 'rules';
const tags = ['Rules'];

export const MAX_RULE_LENGTH = 4000;

const params = z.object({ id: integerId('id') });

const SCOPES =
  'A rule’s `scope` is `universal` (every agent of the organization works under it) or `agent:<name>` (one ' +
  'agent does; the name need not belong to an agent yet, so rules can be written before their agent).';

const scope = z
  .string()
  .trim()
  .regex(RULE_SCOPE_PATTERN, 'must be universal or agent:<agent name>')
  .meta({ description: '`universal` or `agent:<agent name>`' });
const ruleText = z.string().trim().min(1).max(MAX_RULE_LENGTH);
const category = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters')
  .meta({ description: 'Free text of at most 64 characters, e.g. `security`; filters ignore case' });

export const RuleRecord = z
  .object({
    id: z.number().int().meta({ description: 'Integer id, unique within the organization' }),
    rule: z.string(),
    scope: z.string().meta({ description: '`universal` or `agent:<agent name>`' }),
    agent_name: z.string().nullable().meta({ description: 'The agent of an agent-scoped rule; null if universal' }),
    category: z.string().nullable(),
    permanent: z.boolean().meta({ description: 'A permanent rule cannot be deleted (403) or made not permanent' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Rule' });

export const listRules = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/rules',
  auth: 'bearer',
  summary: 'List the organization’s rules',
  description:
    'Oldest first. Filters combine (AND). `scope`: the rules of exactly that scope. `agent`: the rules an agent ' +
    'works under, its own (`agent:<name>`) and the universal ones. `category`: exactly that category, ignoring ' +
    `case. \`permanent\`: \`1\` for permanent rules only, \`0\` for the others. \`scope\` and \`agent\` read a ` +
    'scope index, which shows a change a moment after it is written (DynamoDB’s index follows its table ' +
    `asynchronously); the unfiltered list reads the rules themselves.\n\n${SCOPES}`,
  query: pagingQuery.extend({
    scope: scope.optional(),
    agent: z
      .string()
      .regex(AGENT_NAME_PATTERN, `an agent name: lowercase letters, digits and hyphens, at most ${AGENT_NAME_MAX}`)
      .optional()
      .meta({ description: 'An agent name: its own rules and the universal ones' }),
    category: z
      .string()
      .trim()
      .max(64)
      .optional()
      .transform((value) => value || undefined)
      .meta({ description: 'Exactly this category, ignoring case; empty filters nothing' }),
    permanent: z
      .enum(['0', '1'])
      .transform((value) => value === '1')
      .optional()
      .meta({ description: '`1`: permanent rules only; `0`: the others' }),
  }),
  envelope: 'list',
  response: RuleRecord,
});

export const createRule = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/rules',
  auth: 'bearer',
  summary: 'Create a rule',
  description:
    `\`rule\` (the text, at most ${MAX_RULE_LENGTH} characters) is required; \`scope\` defaults to universal, ` +
    '`permanent` to false. Recorded in the activity log (`rule.created`).\n\n' +
    SCOPES,
  body: z.object({
    rule: ruleText,
    scope: scope.optional(),
    category: category.nullable().optional(),
    permanent: z.boolean().optional(),
  }),
  response: RuleRecord,
  status: 201,
});

export const updateRule = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/rules/{id}',
  auth: 'bearer',
  summary: 'Change a rule',
  description:
    'Any of `rule`, `scope`, `category` (null clears it) and `permanent`, at least one. A rule can be made ' +
    'permanent; a permanent rule cannot be made not permanent (403), though its text, scope and category can ' +
    'be corrected. A PATCH that changes no value writes nothing; each one that does is recorded ' +
    '(`rule.updated`). The change applies to the rule as stored when it is written: a concurrent change is ' +
    `never lost.\n\n${SCOPES}`,
  params,
  body: z
    .object({
      rule: ruleText.optional(),
      scope: scope.optional(),
      category: category.nullable().optional(),
      permanent: z.boolean().optional(),
    })
    .refine(
      (body) => Object.values(body).some((value) => value !== undefined),
      'name at least one of rule, scope, category, permanent',
    ),
  response: RuleRecord,
  errors: [403, 404, 409],
});

export const deleteRule = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/rules/{id}',
  auth: 'bearer',
  summary: 'Delete a rule',
  description:
    'Answers the rule as it was, with `meta.deleted: true`; recorded as `rule.deleted`. A permanent rule ' +
    'answers 403 (FORBIDDEN) and stays.',
  params,
  envelope: 'deleted',
  response: RuleRecord,
  errors: [403, 404],
});
