import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { transact } from '#lib/db/transactions';
import { ConflictError, ForbiddenError, isConditionFailed } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
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

/**
 * PATCH /v1/public/templates/{id}. Only values that differ are written, with the activity entry, in one
 * transaction whose update holds only while the template is active: an archive that lands first turns
 * this PATCH into a 409, never into an edit of an archived template.
 */
export async function updateTemplate(ctx: RequestContext, id: number, changes: TemplateChanges): Promise<Template> {
  const principal = requirePrincipal(ctx);
  const item = await writableItem(principal, id);
  if (item.status === 'archived') throw archivedReadOnly();
  const changed = changedValues(item, changes);
  const fields = Object.keys(changed);
  if (fields.length === 0) return toTemplate(item);

  const orgId = principal.orgId;
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  try {
    await transact([
      templateUpdate({ orgId, id, changed, at }),
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
    ]);
  } catch (error) {
    if (!isConditionFailed(error, 'not-active')) throw error;
    throw (await getTemplateItem({ orgId, id, consistent: true })) ? archivedReadOnly() : templateNotFound();
  }
  return toTemplate({ ...item, ...changed, updated_at: at });
}

/**
 * DELETE /v1/public/templates/{id}: a soft delete. The template leaves both lists but stays readable by
 * id and slug with `status: archived`, and keeps its slug. Archiving an archived template changes
 * nothing and answers it as it is.
 */
export async function archiveTemplate(ctx: RequestContext, id: number): Promise<Template> {
  const principal = requirePrincipal(ctx);
  const item = await writableItem(principal, id);
  if (item.status === 'archived') return toTemplate(item);

  const orgId = principal.orgId;
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  try {
    await transact([
      templateArchive({ orgId, id, at }),
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
    ]);
  } catch (error) {
    if (!isConditionFailed(error, 'not-active')) throw error;
    // A concurrent DELETE archived it first: the outcome this one asked for.
    const current = await getTemplateItem({ orgId, id, consistent: true });
    if (!current) throw templateNotFound();
    return toTemplate(current);
  }
  return toTemplate({ ...item, status: 'archived', archived_at: at, updated_at: at });
}
