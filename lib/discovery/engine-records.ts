import { allOf, itemExists, itemIsNew } from '#lib/db/conditions';
import { tenantPk } from '#lib/db/keys';
import { queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import {
  type EngineFields,
  type EngineItem,
  type EngineSchedule,
  type EngineStats,
  engineKeys,
  engineVersionIs,
} from '#lib/discovery/engine-keys';

/** The access patterns of discovery engines (keys and item types: lib/discovery/engine-keys.ts). */

const EVERYTHING = { limit: Number.POSITIVE_INFINITY, offset: 0 };

/** The organization's engines whose slug begins with `slugPrefix` (all of them for `''`). */
const enginesQuery = (orgId: string, slugPrefix: string) => ({
  KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
  ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': `${engineKeys.prefix}${slugPrefix}` },
});

export async function getEngine(input: {
  orgId: string;
  slug: string;
  consistent?: boolean;
}): Promise<EngineItem | undefined> {
  const { Item } = await table.get({
    Key: engineKeys.bySlug(input.orgId, input.slug),
    ConsistentRead: input.consistent ?? false,
  });
  return Item as EngineItem | undefined;
}

/**
 * Every engine of the organization, oldest first. An organization has a handful of engines (one per
 * layer it watches), so one Query over the `DISCOVERY#` range serves every list and report.
 */
export async function allEngines(orgId: string): Promise<EngineItem[]> {
  const { items } = await queryPage<EngineItem>(enginesQuery(orgId, ''), EVERYTHING);
  return items.sort((a, b) => a.id - b.id);
}

/** The slugs of the organization that begin with `prefix`, read consistently (one Query). */
export async function slugsStartingWith(input: { orgId: string; prefix: string }): Promise<Set<string>> {
  const { items } = await queryPage<Pick<EngineItem, 'slug'>>(
    { ...enginesQuery(input.orgId, input.prefix), ProjectionExpression: 'slug', ConsistentRead: true },
    EVERYTHING,
  );
  return new Set(items.map((item) => item.slug));
}

/** A new engine: its key is the slug's guard (refused with reason `slug-taken`). */
export const newEngineWrite = (item: EngineItem): TransactItem => ({
  Put: { Item: item, ConditionExpression: itemIsNew },
  reason: 'slug-taken',
});

/** The gsi1 keys of an engine whose schedule is not in sync, as of `at`. */
export const unsyncedIndex = (orgId: string, slug: string, at: string) => ({
  gsi1pk: engineKeys.unsyncedPk,
  gsi1sk: engineKeys.unsyncedSort(at, orgId, slug),
});

/**
 * The update of an engine's fields, conditional on the version read (refused with reason `stale`), raising
 * it. `schedule` says what becomes of the schedule's sync: `keep` (the change touches neither interval
 * nor enabled, and the schedule was in sync: it stays so at the new version) or `due` (the engine joins
 * the reconciler's index until its schedule is synced). Run stats are not touched: runs ADD to them
 * without raising the version.
 */
export function engineUpdate(input: {
  orgId: string;
  before: EngineItem;
  changed: Partial<EngineFields>;
  schedule: 'keep' | 'due';
  at: string;
}): TransactItem {
  const { orgId, before } = input;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':version': before.version, ':next': before.version + 1, ':at': input.at };
  const sets = ['version = :next', 'updated_at = :at'];
  for (const [field, value] of Object.entries(input.changed)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  if (input.schedule === 'keep') {
    sets.push('schedule_synced_version = :next');
  } else {
    const index = unsyncedIndex(orgId, before.slug, input.at);
    values[':gsi1pk'] = index.gsi1pk;
    values[':gsi1sk'] = index.gsi1sk;
    sets.push('gsi1pk = :gsi1pk', 'gsi1sk = :gsi1sk');
  }
  return {
    Update: {
      Key: engineKeys.bySlug(orgId, before.slug),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: allOf(itemExists, engineVersionIs),
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: values,
    },
    reason: 'stale',
  };
}

/** The deletion of an engine as read (refused with reason `stale` when it changed or went meanwhile). */
export const engineDelete = (orgId: string, before: EngineItem): TransactItem => ({
  Delete: {
    Key: engineKeys.bySlug(orgId, before.slug),
    ConditionExpression: allOf(itemExists, engineVersionIs),
    ExpressionAttributeValues: { ':version': before.version },
  },
  reason: 'stale',
});

/**
 * Records that the scheduler holds version `version` of the engine (what it answered: `schedule`), and
 * takes the engine out of the reconciler's index; refused (`stale`) when the engine changed or went since.
 */
export async function markScheduleSynced(input: {
  orgId: string;
  slug: string;
  version: number;
  schedule: EngineSchedule;
}): Promise<void> {
  await table.update({
    Key: engineKeys.bySlug(input.orgId, input.slug),
    UpdateExpression:
      'SET #schedule = :schedule, schedule_synced_version = :version, schedule_error = :none REMOVE gsi1pk, gsi1sk',
    ConditionExpression: allOf(itemExists, engineVersionIs),
    ExpressionAttributeNames: { '#schedule': 'schedule' },
    ExpressionAttributeValues: { ':schedule': input.schedule, ':version': input.version, ':none': null },
    reason: 'stale',
  });
}

/**
 * Records why the scheduler refused version `version`: the engine is not in sync (whatever it was before:
 * the refused put may have been a repair of an older put that undid a newer one) and is in the
 * reconciler's index. Refused (`stale`) when the engine changed or went since.
 */
export async function markScheduleFailed(input: {
  orgId: string;
  slug: string;
  version: number;
  error: string;
  at: string;
}): Promise<void> {
  const index = unsyncedIndex(input.orgId, input.slug, input.at);
  await table.update({
    Key: engineKeys.bySlug(input.orgId, input.slug),
    UpdateExpression:
      'SET schedule_error = :error, schedule_synced_version = :none, gsi1pk = if_not_exists(gsi1pk, :gsi1pk), ' +
      'gsi1sk = if_not_exists(gsi1sk, :gsi1sk)',
    ConditionExpression: allOf(itemExists, engineVersionIs),
    ExpressionAttributeValues: {
      ':error': input.error,
      ':none': null,
      ':gsi1pk': index.gsi1pk,
      ':gsi1sk': index.gsi1sk,
      ':version': input.version,
    },
    reason: 'stale',
  });
}

/**
 * Marks version `version` of the engine as not held by the scheduler (a sync gave up while its own put
 * may have undone a newer one): the engine joins the reconciler's index. Refused (`stale`) when it changed.
 */
export async function markScheduleUnsynced(input: {
  orgId: string;
  slug: string;
  version: number;
  at: string;
}): Promise<void> {
  const index = unsyncedIndex(input.orgId, input.slug, input.at);
  await table.update({
    Key: engineKeys.bySlug(input.orgId, input.slug),
    UpdateExpression: 'SET schedule_synced_version = :none, gsi1pk = :gsi1pk, gsi1sk = :gsi1sk',
    ConditionExpression: allOf(itemExists, engineVersionIs),
    ExpressionAttributeValues: {
      ':none': null,
      ':gsi1pk': index.gsi1pk,
      ':gsi1sk': index.gsi1sk,
      ':version': input.version,
    },
    reason: 'stale',
  });
}

/** Engines of every organization whose schedule has been out of sync since before `before` (ISO time). */
export async function unsyncedEngines(before: string): Promise<EngineItem[]> {
  const items: EngineItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
      ExpressionAttributeValues: { ':pk': engineKeys.unsyncedPk, ':before': before },
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    items.push(...((result.Items ?? []) as EngineItem[]));
    start = result.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * A run's counts added to its engine's stats, with the engine's last run, for the transaction that ends
 * the run. Held to the engine the run belongs to (its id), so that a run ending after its engine was
 * deleted (and perhaps created again under the same slug) counts nowhere: refused with `engine-gone`.
 */
export function engineStatsWrite(input: {
  orgId: string;
  slug: string;
  engineId: number;
  add: Partial<EngineStats>;
  lastRun: { at: string; status: string };
}): TransactItem {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {
    ':id': input.engineId,
    ':lastAt': input.lastRun.at,
    ':lastStatus': input.lastRun.status,
  };
  const adds = Object.entries(input.add).map(([field, by]) => {
    names[`#${field}`] = field;
    values[`:${field}`] = by;
    return `#${field} :${field}`;
  });
  return {
    Update: {
      Key: engineKeys.bySlug(input.orgId, input.slug),
      UpdateExpression: `SET last_run_at = :lastAt, last_run_status = :lastStatus ADD ${adds.join(', ')}`,
      ConditionExpression: allOf(itemExists, '#id = :id'),
      ExpressionAttributeNames: { ...names, '#id': 'id' },
      ExpressionAttributeValues: values,
    },
    reason: 'engine-gone',
  };
}
