import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { freeFormObject, pagingQuery } from '#lib/http/schemas';
import { integerId } from '#lib/routes/schemas';
import { MODEL_TIERS } from '#lib/templates/built-in-templates';
import { TEMPLATE_DEFAULTS } from '#lib/templates/template-create';
import {
  ORG_TEMPLATE_ID_BASE,
  TEMPLATE_CATEGORIES,
  TEMPLATE_SLUG_MAX,
  TEMPLATE_SLUG_PATTERN,
  TEMPLATE_STATUSES,
} from '#lib/templates/template-keys';

/**
 * Agent templates, operational (`/agent-templates`: list, read, apply) and public (`/v1/public/templates`:
 * the organization's own templates, created, changed and archived), served by the `agent-templates`
 * function.
 */

const group = 'agent-templates';
const tags = ['Agent templates'];
const publicTags = ['Public API'];

export const MAX_TEMPLATE_SEARCH_LENGTH = 200;
export const AGENT_NAME_MAX = 40;
export const AGENT_NAME_PATTERN = /^[a-z][a-z0-9-]*$/;

const IDS =
  `Ids: the five built-in templates are 1 to 5; an organization's own templates get ids from a counter of ` +
  `their organization starting at ${ORG_TEMPLATE_ID_BASE + 1}, so they never collide with a built-in. Built-ins ` +
  'live in the service itself: every organization sees them, and they are read-only.';
const ARCHIVED =
  'An archived template is hidden from both lists but stays readable by id (and slug) with ' +
  '`status: "archived"`; it keeps its slug, which therefore stays taken in the organization.';
const MODELS =
  `Built-in templates use the standard model \`${MODEL_TIERS.standard}\` or the light model ` +
  `\`${MODEL_TIERS.light}\`; \`config.model_tier\` names the tier.`;

const category = z.enum(TEMPLATE_CATEGORIES).meta({ description: TEMPLATE_CATEGORIES.join(', ') });
const featured = z
  .enum(['true', 'false'])
  .transform((value) => value === 'true')
  .meta({ description: '`true`: featured templates only; `false`: the others' });

const slug = z
  .string()
  .min(1)
  .max(TEMPLATE_SLUG_MAX)
  .regex(TEMPLATE_SLUG_PATTERN, 'lowercase letters, digits and single hyphens, starting with a letter')
  .meta({ description: 'Unique in the organization and among the built-ins; fixed at creation' });

const idOrSlug = z
  .string()
  .max(TEMPLATE_SLUG_MAX)
  .regex(/^(?:\d{1,12}|[a-z][a-z0-9-]*)$/, 'an integer id or a slug (lowercase letters, digits and hyphens)')
  .transform((value) => (/^\d+$/.test(value) ? Number(value) : value))
  .meta({ description: 'Integer id, or slug' });

const templateName = z.string().trim().min(1).max(100);
const nameList = (max: number) =>
  z
    .array(z.string().trim().min(1).max(max))
    .max(50)
    .refine((names) => new Set(names).size === names.length, 'names a value twice');

/** What a template holds besides name and slug, each optional on create and update. */
const templateFields = {
  description: z.string().max(2000).optional(),
  icon: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .optional()
    .meta({ description: 'Name of an icon of an icon library, e.g. `code`' }),
  category: category.nullable().optional().meta({ description: 'One of the five categories; null for none' }),
  model: z.string().trim().min(1).max(200).optional().meta({ description: 'Language-model identifier' }),
  interval_sec: z.number().int().min(1).max(86_400).optional().meta({ description: 'Seconds between agent runs' }),
  identity: z.string().max(20_000).optional().meta({ description: 'System prompt / personality' }),
  soul_content: z.string().max(50_000).optional().meta({ description: 'Markdown rules and operational scope' }),
  core_rules: z.string().max(20_000).optional().meta({ description: 'Hard constraints the agent must follow' }),
  tools: nameList(64).optional().meta({ description: 'Tool names, e.g. `file_read` (at most 50)' }),
  capabilities: nameList(100).optional().meta({ description: 'Capability tags (at most 50)' }),
  config: freeFormObject({ maxDepth: 8, maxBytes: 16_384 }).optional(),
  is_featured: z.boolean().optional(),
  sort_order: z.number().int().min(-1_000_000).max(1_000_000).optional(),
};

const DEFAULTS =
  'Fields not given take these values: ' +
  Object.entries(TEMPLATE_DEFAULTS)
    .map(([field, value]) => `\`${field}\` ${JSON.stringify(value)}`)
    .join(', ') +
  '.';

export const TemplateRecord = z
  .object({
    id: z.number().int(),
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    icon: z.string(),
    category: z.enum(TEMPLATE_CATEGORIES).nullable(),
    model: z.string(),
    interval_sec: z.number().int(),
    identity: z.string(),
    soul_content: z.string(),
    core_rules: z.string(),
    tools: z.array(z.string()),
    capabilities: z.array(z.string()),
    config: z.record(z.string(), z.unknown()),
    is_featured: z.boolean(),
    sort_order: z.number().int(),
    built_in: z.boolean().meta({ description: 'A built-in template (read-only, the same in every organization)' }),
    status: z.enum(TEMPLATE_STATUSES).meta({ description: 'Built-ins are always active' }),
    created_at: z.string().nullable().meta({ description: 'Null for built-ins' }),
    updated_at: z.string().nullable().meta({ description: 'Null for built-ins' }),
    archived_at: z.string().nullable(),
  })
  .meta({ id: 'AgentTemplate' });

export const TemplateSummaryRecord = TemplateRecord.pick({
  id: true,
  slug: true,
  name: true,
  description: true,
  icon: true,
  category: true,
  model: true,
  is_featured: true,
  capabilities: true,
  tools: true,
}).meta({ id: 'AgentTemplateSummary' });

export const AppliedTemplateRecord = z
  .object({
    name: z.string(),
    display_name: z.string(),
    model: z.string(),
    interval_sec: z.number().int(),
    identity: z.string(),
    soul_content: z.string(),
    core_rules: z.string(),
    tools: z.array(z.string()),
    capabilities: z.array(z.string()),
    config: z.record(z.string(), z.unknown()),
    template_slug: z.string(),
    template_name: z.string(),
  })
  .meta({ id: 'AppliedAgentTemplate' });

export const listTemplates = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agent-templates',
  auth: 'bearer',
  summary: 'List agent templates',
  description:
    'The built-in templates and the organization’s own active ones, by `sort_order`, then id. Filters combine ' +
    '(AND): `category` (one of the five; another value is 400), `featured`, and `search`, a case-insensitive ' +
    'part of the name or description. Each item carries only id, slug, name, description, icon, category, ' +
    `model, is_featured, capabilities and tools.\n\n${IDS}\n\n${ARCHIVED}`,
  query: pagingQuery.extend({
    category: category.optional(),
    featured: featured.optional(),
    search: z
      .string()
      .max(MAX_TEMPLATE_SEARCH_LENGTH)
      .optional()
      .meta({ description: 'Case-insensitive part of the name or description' }),
  }),
  envelope: 'list',
  response: TemplateSummaryRecord,
});

export const getTemplate = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agent-templates/{idOrSlug}',
  auth: 'bearer',
  summary: 'One agent template with every field',
  description: [
    `By integer id or by slug. A template of another organization answers 404. ${MODELS}`,
    IDS,
    ARCHIVED,
  ].join('\n\n'),
  params: z.object({ idOrSlug }),
  response: TemplateRecord,
  errors: [404],
});

export const applyTemplate = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/agent-templates/{idOrSlug}/apply',
  auth: 'bearer',
  permission: 'read',
  summary: 'The agent configuration a template gives',
  description:
    'Writes nothing (so a read permission suffices): answers the configuration of a new agent, to send as it ' +
    'is to POST /agents. `{{name}}` and `{{display_name}}` in identity, soul_content and core_rules are ' +
    'replaced by the given values. An archived template cannot be applied (409).',
  params: z.object({ idOrSlug }),
  body: z.object({
    name: z
      .string()
      .max(AGENT_NAME_MAX)
      .regex(AGENT_NAME_PATTERN, 'lowercase letters, digits and hyphens, starting with a letter')
      .meta({ description: `The new agent's name: lowercase letters, digits and hyphens, at most ${AGENT_NAME_MAX}` }),
    display_name: z.string().trim().min(1).max(100),
  }),
  response: AppliedTemplateRecord,
  errors: [404, 409],
});

/* The public API: the organization's own templates, with the built-ins readable beside them. */

const params = z.object({ id: integerId('id') });

export const listPublicTemplates = defineRoute({
  group,
  tags: publicTags,
  method: 'GET',
  path: '/v1/public/templates',
  auth: 'bearer',
  summary: 'List agent templates with every field (public API)',
  description:
    'The built-in templates and the organization’s own active ones, by `sort_order`, then id, as full ' +
    `records. Filters combine (AND).\n\n${IDS}\n\n${ARCHIVED}`,
  query: pagingQuery.extend({ category: category.optional(), featured: featured.optional() }),
  envelope: 'list',
  response: TemplateRecord,
});

export const createPublicTemplate = defineRoute({
  group,
  tags: publicTags,
  method: 'POST',
  path: '/v1/public/templates',
  auth: 'bearer',
  summary: 'Create an organization template (public API)',
  description:
    '`name` and `slug` are required. A slug the organization has (archived templates included) or that a ' +
    `built-in uses is 409; two concurrent creates of one slug make one template. ${DEFAULTS} Unknown fields are ` +
    `ignored. The creation is recorded in the activity log (\`template.created\`).\n\n${IDS}`,
  body: z.object({ name: templateName, slug, ...templateFields }),
  response: TemplateRecord,
  status: 201,
  errors: [409],
});

export const getPublicTemplate = defineRoute({
  group,
  tags: publicTags,
  method: 'GET',
  path: '/v1/public/templates/{id}',
  auth: 'bearer',
  summary: 'One agent template (public API)',
  description: `Built-ins are readable by their ids; a template of another organization answers 404. ${ARCHIVED}`,
  params,
  response: TemplateRecord,
  errors: [404],
});

export const updatePublicTemplate = defineRoute({
  group,
  tags: publicTags,
  method: 'PATCH',
  path: '/v1/public/templates/{id}',
  auth: 'bearer',
  summary: 'Update an organization template (public API)',
  description:
    'At least one field. The slug is fixed: a body with `slug` is 400. Built-ins are read-only (403); an ' +
    'archived template cannot change (409). `null` for `category` files the template under none. Lists and ' +
    '`config` are replaced as a whole. A PATCH that changes no value writes nothing (`updated_at` stays); ' +
    'each one that does is recorded in the activity log (`template.updated`).',
  params,
  body: z
    .object({
      name: templateName.optional(),
      slug: z
        .unknown()
        .refine(() => false, 'is fixed at creation and cannot change')
        .optional()
        .meta({ description: 'Not accepted (400): the slug cannot change' }),
      ...templateFields,
    })
    .refine((body) => Object.values(body).some((value) => value !== undefined), 'name at least one field to change'),
  response: TemplateRecord,
  errors: [403, 404, 409],
});

export const archivePublicTemplate = defineRoute({
  group,
  tags: publicTags,
  method: 'DELETE',
  path: '/v1/public/templates/{id}',
  auth: 'bearer',
  summary: 'Archive an organization template (public API; soft delete)',
  description:
    `Sets \`status\` to archived; the record stays. ${ARCHIVED} Archiving an archived template changes ` +
    'nothing. Built-ins are read-only (403). Answers `{ data: template, meta: { deleted: false, status: ' +
    '"archived" } }`; the change is recorded in the activity log (`template.archived`).',
  params,
  envelope: 'deleted',
  response: TemplateRecord,
  errors: [403, 404],
});
