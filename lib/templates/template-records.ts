import { allOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { unchangedSince } from '#lib/search/search-postings';
import {
  ORG_TEMPLATE_ID_BASE,
  type TemplateItem,
  type TemplateSlugItem,
  templateIsActive,
  templateKeys,
} from '#lib/templates/template-keys';

/**
 * The access patterns of organization templates (keys and item types: lib/templates/template-keys.ts).
 * Writes are answered as items for the caller's transaction, each refused under a reason code:
 *
 * | reason | refused when |
 * |---|---|
 * | `slug-taken` | the organization has a template with the slug (archived ones included) |
 * | `not-active` | the template is gone or archived since it was read (or its text changed, where the write says) |
 */

/** The next organization template id: 1001, 1002, … (one atomic counter per organization). */
export const nextTemplateId = async (orgId: string): Promise<number> =>
  ORG_TEMPLATE_ID_BASE + (await nextId(counterKey(templateKeys.counter, tenantPk(orgId))));

export async function getTemplateItem(input: {
  orgId: string;
  id: number;
  consistent?: boolean;
}): Promise<TemplateItem | undefined> {
  const { Item } = await table.get({
    Key: templateKeys.byId(input.orgId, input.id),
    ConsistentRead: input.consistent ?? false,
  });
  return Item as TemplateItem | undefined;
}

/** The organization template with this slug, or undefined: the slug guard, then the template. */
export async function getTemplateItemBySlug(input: { orgId: string; slug: string }): Promise<TemplateItem | undefined> {
  const { Item } = await table.get({ Key: templateKeys.slug(input.orgId, input.slug), ConsistentRead: true });
  if (!Item) return undefined;
  return getTemplateItem({ orgId: input.orgId, id: (Item as TemplateSlugItem).template_id, consistent: true });
}

/**
 * Every template of the organization, archived ones included. An organization keeps tens of templates,
 * so one Query over the `TEMPLATE#` range (which the `TEMPLATESLUG#` guards do not share) serves every
 * list request.
 */
export async function allTemplateItems(orgId: string): Promise<TemplateItem[]> {
  const items: TemplateItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': templateKeys.prefix },
      // A template created or archived a moment ago shows (or leaves) in the next list.
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    items.push(...((result.Items ?? []) as TemplateItem[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/**
 * The writes of a new template: the template and its slug guard, refused with reason `slug-taken` when
 * the organization has the slug. Both land or neither does, so two concurrent creates of one slug give
 * one template and one 409.
 */
export function newTemplateWrites(orgId: string, item: TemplateItem): TransactItem[] {
  const guard: TemplateSlugItem = { ...templateKeys.slug(orgId, item.slug), template_id: item.id };
  return [
    { Put: { Item: item, ConditionExpression: itemIsNew } },
    { Put: { Item: guard, ConditionExpression: itemIsNew }, reason: 'slug-taken' },
  ];
}

/**
 * The update of an active template's fields (never creating one, never touching an archived one). With
 * `textRead`, it also holds only while those text fields are the ones read (the search postings that go
 * with it were decided on them); refused under `not-active` either way.
 */
export function templateUpdate(input: {
  orgId: string;
  id: number;
  changed: Partial<TemplateItem>;
  at: string;
  textRead?: Record<string, string | null> | undefined;
}): TransactItem {
  const unchanged = input.textRead ? unchangedSince(input.textRead) : undefined;
  const names: Record<string, string> = { '#status': 'status', ...unchanged?.names };
  const values: Record<string, unknown> = { ':updatedAt': input.at, ':active': 'active', ...unchanged?.values };
  const sets = ['updated_at = :updatedAt'];
  for (const [field, value] of Object.entries(input.changed)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  return {
    Update: {
      Key: templateKeys.byId(input.orgId, input.id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: allOf(itemExists, templateIsActive, ...(unchanged ? [unchanged.condition] : [])),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
    reason: 'not-active',
  };
}

/**
 * Archives an active template whose text is still `textRead` (its search postings leave with it); its
 * slug guard stays, so the slug stays taken.
 */
export function templateArchive(input: {
  orgId: string;
  id: number;
  at: string;
  textRead: Record<string, string | null>;
}): TransactItem {
  const unchanged = unchangedSince(input.textRead);
  return {
    Update: {
      Key: templateKeys.byId(input.orgId, input.id),
      UpdateExpression: 'SET #status = :archived, archived_at = :at, updated_at = :at',
      ConditionExpression: allOf(itemExists, templateIsActive, unchanged.condition),
      ExpressionAttributeNames: { '#status': 'status', ...unchanged.names },
      ExpressionAttributeValues: { ':archived': 'archived', ':active': 'active', ':at': input.at, ...unchanged.values },
    },
    reason: 'not-active',
  };
}
