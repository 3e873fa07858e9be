import type { Page, PageRequest } from '#lib/db/paging';
import { NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { builtInById, builtInBySlug, builtInTemplates } from '#lib/templates/built-in-templates';
import { ORG_TEMPLATE_ID_BASE, type Template, type TemplateCategory, toTemplate } from '#lib/templates/template-keys';
import { allTemplateItems, getTemplateItem, getTemplateItemBySlug } from '#lib/templates/template-records';

/** Reading templates: the lists and one template by id or slug, built-in or the organization's own. */

export const templateNotFound = () => new NotFoundError('Template not found');

/** A template as a path names it: an integer id, or a slug. */
export type TemplateRef = number | string;

export interface TemplateFilter {
  category?: TemplateCategory | undefined;
  featured?: boolean | undefined;
  /** Case-insensitive part of the name or the description. */
  search?: string | undefined;
}

/** Display order: `sort_order`, then id (built-ins before the organization's templates on a tie). */
const byDisplayOrder = (a: Template, b: Template) => a.sort_order - b.sort_order || a.id - b.id;

/**
 * The templates a list shows: the built-ins and the organization's active templates, filtered, in display
 * order. Archived templates are never listed.
 */
export async function listTemplates(
  ctx: RequestContext,
  filter: TemplateFilter,
  page: PageRequest,
): Promise<Page<Template>> {
  const principal = requirePrincipal(ctx);
  const own = (await allTemplateItems(principal.orgId)).filter((item) => item.status === 'active').map(toTemplate);
  const search = filter.search?.trim().toLowerCase();
  const matches = (template: Template) =>
    (filter.category === undefined || template.category === filter.category) &&
    (filter.featured === undefined || template.is_featured === filter.featured) &&
    (!search || [template.name, template.description].some((text) => text.toLowerCase().includes(search)));
  const found = [...builtInTemplates(), ...own].filter(matches).sort(byDisplayOrder);
  return { items: found.slice(page.offset, page.offset + page.limit), total: found.length };
}

/**
 * A built-in or one of the organization's templates, archived ones included; undefined when there is
 * none. Ids up to 1000 are built-ins only; a built-in slug always names the built-in (no organization
 * can take one).
 */
export async function findTemplate(ctx: RequestContext, ref: TemplateRef): Promise<Template | undefined> {
  const principal = requirePrincipal(ctx);
  if (typeof ref === 'number') {
    if (ref <= ORG_TEMPLATE_ID_BASE) return builtInById(ref);
    const item = await getTemplateItem({ orgId: principal.orgId, id: ref, consistent: true });
    return item ? toTemplate(item) : undefined;
  }
  const builtIn = builtInBySlug(ref);
  if (builtIn) return builtIn;
  const item = await getTemplateItemBySlug({ orgId: principal.orgId, slug: ref });
  return item ? toTemplate(item) : undefined;
}

/** GET /agent-templates/{idOrSlug} and GET /v1/public/templates/{id}: 404 when there is none. */
export async function getTemplate(ctx: RequestContext, ref: TemplateRef): Promise<Template> {
  const template = await findTemplate(ctx, ref);
  if (!template) throw templateNotFound();
  return template;
}
