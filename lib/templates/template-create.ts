import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { pad } from '#lib/db/keys';
import { transact } from '#lib/db/transactions';
import { ConflictError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { templateSearchFields, wordsOf } from '#lib/search/search-fields';
import { postingWrites } from '#lib/search/search-postings';
import { BUILT_IN_SLUGS, MODEL_TIERS } from '#lib/templates/built-in-templates';
import {
  type Template,
  type TemplateFields,
  type TemplateItem,
  templateKeys,
  toTemplate,
} from '#lib/templates/template-keys';
import { newTemplateWrites, nextTemplateId } from '#lib/templates/template-records';

/** Creating an organization template: POST /v1/public/templates. */

export type NewTemplate = { name: string; slug: string } & {
  [F in keyof TemplateFields]?: TemplateFields[F] | undefined;
};

/**
 * What a template created without a field holds, so that every template applies to a complete agent
 * configuration: the standard model, a five-minute interval, empty prompts and lists, sorted after the
 * built-ins (which use 10 to 50).
 */
export const TEMPLATE_DEFAULTS: Omit<TemplateFields, 'name'> = {
  description: '',
  icon: 'bot',
  category: null,
  model: MODEL_TIERS.standard,
  interval_sec: 300,
  identity: '',
  soul_content: '',
  core_rules: '',
  tools: [],
  capabilities: [],
  config: {},
  is_featured: false,
  sort_order: 100,
};

export const templateSlugTaken = () =>
  new ConflictError('A template with this slug exists', [{ path: 'slug', message: 'is taken' }]);

const defined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;

/**
 * POST /v1/public/templates. A built-in slug is taken in every organization (409). One transaction
 * writes the template, its slug guard, its search postings and the activity entry; the guard's condition makes the slug
 * unique even when two creates race (the loser hears 409).
 */
export async function createTemplate(ctx: RequestContext, input: NewTemplate): Promise<Template> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  if (BUILT_IN_SLUGS.has(input.slug)) throw templateSlugTaken();

  const id = await nextTemplateId(orgId);
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const actor = activityActor(principal);
  const item: TemplateItem = {
    ...templateKeys.byId(orgId, id),
    ...structuredClone(TEMPLATE_DEFAULTS),
    ...defined(input),
    id,
    slug: input.slug,
    name: input.name,
    status: 'active',
    archived_at: null,
    created_at: at,
    updated_at: at,
    created_by: actor.actor_id,
  };
  await transact(
    [
      ...newTemplateWrites(orgId, item),
      ...activityWrites(
        orgId,
        {
          ...actor,
          action: 'template.created',
          entity_type: 'template',
          entity_id: String(id),
          metadata: { slug: item.slug, name: item.name },
        },
        now,
      ),
      ...postingWrites({ orgId, kind: 'template', ref: pad(id), after: wordsOf(templateSearchFields(item)) }),
    ],
    { 'slug-taken': templateSlugTaken },
  );
  return toTemplate(item);
}
