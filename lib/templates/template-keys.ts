import { pad, type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where organization templates live in the table (access patterns: lib/templates/template-records.ts).
 * The five built-in templates are not stored: they live in code (lib/templates/built-in-templates.ts)
 * and exist in every instance from its first start, without a migration.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | template | `T#<org>` | `TEMPLATE#<id>` | `status` active or archived |
 * | slug guard | `T#<org>` | `TEMPLATESLUG#<slug>` | `template_id`; makes a slug unique in the organization |
 * | template count | `T#<org>` | `COUNTER#templates` | the sequence behind organization template ids |
 *
 * Ids: built-ins are 1 to 5; an organization's templates are `1000 + n`, n from the organization's own
 * counter, so they start at 1001 and never collide with a built-in. The slug is fixed at creation and an
 * archived template keeps its guard: the slug stays taken and still names the archived record.
 */
export const templateKeys = {
  byId: (orgId: string, id: number): TableKey => ({ pk: tenantPk(orgId), sk: `TEMPLATE#${pad(id)}` }),
  prefix: 'TEMPLATE#',
  slug: (orgId: string, slug: string): TableKey => ({ pk: tenantPk(orgId), sk: `TEMPLATESLUG#${slug}` }),
  counter: 'templates',
};

/** Organization template ids are this plus the organization's counter: 1001, 1002, … */
export const ORG_TEMPLATE_ID_BASE = 1000;

/**
 * A slug: lowercase letters and digits in runs joined by single hyphens, starting with a letter so that
 * no slug reads as an id in `/agent-templates/{idOrSlug}`; at most 64 characters.
 */
export const TEMPLATE_SLUG_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
export const TEMPLATE_SLUG_MAX = 64;

export const TEMPLATE_CATEGORIES = ['development', 'integration', 'quality', 'data', 'infrastructure'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

export const TEMPLATE_STATUSES = ['active', 'archived'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];

/** What a template holds besides its identity: everything create takes but the slug. */
export interface TemplateFields {
  name: string;
  description: string;
  /** The name of an icon of an icon library (`code`, `plug`, `bug`…). */
  icon: string;
  /** One of the five categories; null for an organization template filed under none. */
  category: TemplateCategory | null;
  model: string;
  interval_sec: number;
  identity: string;
  soul_content: string;
  core_rules: string;
  tools: string[];
  capabilities: string[];
  config: Record<string, unknown>;
  is_featured: boolean;
  sort_order: number;
}

export interface TemplateItem extends TableKey, TemplateFields {
  id: number;
  slug: string;
  status: TemplateStatus;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  created_by: string;
}

export interface TemplateSlugItem extends TableKey {
  template_id: number;
}

/** A template as the API shows it, built-in or the organization's own. */
export interface Template extends TemplateFields {
  id: number;
  slug: string;
  built_in: boolean;
  status: TemplateStatus;
  /** Null for built-ins, which have no stored record. */
  created_at: string | null;
  updated_at: string | null;
  archived_at: string | null;
}

/** The fields the template list shows (the specification's list), in its order. */
export const TEMPLATE_LIST_FIELDS = [
  'id',
  'slug',
  'name',
  'description',
  'icon',
  'category',
  'model',
  'is_featured',
  'capabilities',
  'tools',
] as const;
export type TemplateSummary = Pick<Template, (typeof TEMPLATE_LIST_FIELDS)[number]>;

export const toTemplate = (item: TemplateItem): Template => ({
  id: item.id,
  slug: item.slug,
  name: item.name,
  description: item.description,
  icon: item.icon,
  category: item.category ?? null,
  model: item.model,
  interval_sec: item.interval_sec,
  identity: item.identity,
  soul_content: item.soul_content,
  core_rules: item.core_rules,
  tools: [...(item.tools ?? [])],
  capabilities: [...(item.capabilities ?? [])],
  config: { ...(item.config ?? {}) },
  is_featured: item.is_featured,
  sort_order: item.sort_order,
  built_in: false,
  status: item.status,
  created_at: item.created_at,
  updated_at: item.updated_at,
  archived_at: item.archived_at ?? null,
});

export const toTemplateSummary = (template: Template): TemplateSummary => ({
  id: template.id,
  slug: template.slug,
  name: template.name,
  description: template.description,
  icon: template.icon,
  category: template.category,
  model: template.model,
  is_featured: template.is_featured,
  capabilities: template.capabilities,
  tools: template.tools,
});

/** The template is still active (`:active`): archived ones are read-only. */
export const templateIsActive = '#status = :active';
