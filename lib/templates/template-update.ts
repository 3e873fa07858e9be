import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { pad } from '#lib/db/keys';
import { transact } from '#lib/db/transactions';
import { ConflictError, ForbiddenError, isConditionFailed } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import { templateSearchFields, wordsOf } from '#lib/search/search-fields';
import { postingWrites } from '#lib/search/search-postings';
import { builtInById } from '#lib/templates/built-in-templates';
import {
  ORG_TEMPLATE_ID_BASE,
  type Template,
  type TemplateFields,
  type TemplateItem,
  toTemplate,
} from '#lib/templates/template-keys';
import { templateNotFound } from '#lib/templates/template-queries';
import { getTemplateItem, templateArchive, templateUpdate } from '#lib/templates/template-records';

/** Changing and archiving an organization template: PATCH and DELETE /v1/public/templates/{id}. */

/** Every field a template is created with may change, except its slug. */
export type TemplateChanges = { [F in keyof TemplateFields]?: TemplateFields[F] | undefined };

const CHANGEABLE: (keyof TemplateFields)[] = [
  'name',
  'description',
  'icon',
  'category',
  'model',
  'interval_sec',
  'identity',
  'soul_content',
  'core_rules',
  'tools',
  'capabilities',
  'config',
  'is_featured',
  'sort_order',
];

const builtInReadOnly = () =>
  new ForbiddenError('Built-in templates are read-only; create a template of your own from this one instead');
const archivedReadOnly = () => new ConflictError('The template is archived; archived templates cannot change');

/** The organization's template to write to; built-ins are read-only (403), unknown ids 404. */
async function writableItem(principal: Principal, id: number): Promise<TemplateItem> {
  if (id <= ORG_TEMPLATE_ID_BASE) throw builtInById(id) ? builtInReadOnly() : templateNotFound();
  const item = await getTemplateItem({ orgId: principal.orgId, id, consistent: true });
  if (!item) throw templateNotFound();
  return item;
}

/** The values a PATCH gives that differ from the template's (lists and objects compared as JSON). */
function changedValues(item: TemplateItem, changes: TemplateChanges): Partial<TemplateItem> {
  const differs = (field: keyof TemplateFields) =>
    changes[field] !== undefined && JSON.stringify(changes[field]) !== JSON.stringify(item[field] ?? null);
  return Object.fromEntries(
    CHANGEABLE.filter(differs).map((field) => [field, changes[field]]),
  ) as Partial<TemplateItem>;
}

/** A write refused as `not-active` is read again and tried again this often (a concurrent text edit). */
const WRITE_ATTEMPTS = 3;

const changedMeanwhile = () =>
  new ConflictError('The template was changed by another request at the same time; try again');

/** The template's searchable text as read: what a write that moves its postings holds on to. */
const textOf = (item: TemplateItem): Record<string, string | null> =>
  Object.fromEntries(templateSearchFields(item).filter(([field]) => field !== 'slug'));

/**
 * PATCH /v1/public/templates/{id}. Only values that differ are written, with the activity entry, in one
 * transaction whose update holds only while the template is active: an archive that lands first turns
 * this PATCH into a 409, never into an edit of an archived template. A new name or description moves
 * the template's search postings in that transaction, which then also holds only while the text is the
 * one read; a concurrent edit of it makes this PATCH read again and start over.
 */
export async function updateTemplate(ctx: RequestContext, id: number, changes: TemplateChanges): Promise<Template> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 1; ; attempt += 1) {
    const item = await writableItem(principal, id);
    if (item.status === 'archived') throw archivedReadOnly();
    const changed = changedValues(item, changes);
    const fields = Object.keys(changed);
    if (fields.length === 0) return toTemplate(item);

    const now = ctx.ports.clock.now();
    const at = now.toISOString();
    const postings = postingWrites({
      orgId,
      kind: 'template',
      ref: pad(id),
      before: wordsOf(templateSearchFields(item)),
      after: wordsOf(templateSearchFields({ ...item, ...changed })),
    });
    try {
      await transact([
        templateUpdate({ orgId, id, changed, at, textRead: postings.length > 0 ? textOf(item) : undefined }),
        ...activityWrites(
          orgId,
          {
            ...activityActor(principal),
            action: 'template.updated',
            entity_type: 'template',
            entity_id: String(id),
            metadata: { changed: fields },
          },
          now,
        ),
        ...postings,
      ]);
      return toTemplate({ ...item, ...changed, updated_at: at });
    } catch (error) {
      if (!isConditionFailed(error, 'not-active')) throw error;
      // Archived or gone meanwhile: the next round says which. Its text changed: start over.
      if (attempt >= WRITE_ATTEMPTS) throw changedMeanwhile();
    }
  }
}

/**
 * DELETE /v1/public/templates/{id}: a soft delete. The template leaves both lists and the search index
 * but stays readable by id and slug with `status: archived`, and keeps its slug. Archiving an archived
 * template changes nothing and answers it as it is.
 */
export async function archiveTemplate(ctx: RequestContext, id: number): Promise<Template> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  for (let attempt = 1; ; attempt += 1) {
    const item = await writableItem(principal, id);
    // Also the answer when a concurrent DELETE archived it first: the outcome this one asked for.
    if (item.status === 'archived') return toTemplate(item);

    const now = ctx.ports.clock.now();
    const at = now.toISOString();
    try {
      await transact([
        templateArchive({ orgId, id, at, textRead: textOf(item) }),
        ...activityWrites(
          orgId,
          {
            ...activityActor(principal),
            action: 'template.archived',
            entity_type: 'template',
            entity_id: String(id),
            metadata: { slug: item.slug },
          },
          now,
        ),
        ...postingWrites({ orgId, kind: 'template', ref: pad(id), before: wordsOf(templateSearchFields(item)) }),
      ]);
      return toTemplate({ ...item, status: 'archived', archived_at: at, updated_at: at });
    } catch (error) {
      if (!isConditionFailed(error, 'not-active')) throw error;
      if (attempt >= WRITE_ATTEMPTS) throw changedMeanwhile();
    }
  }
}
