import { itemIsNew } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import {
  guardNames,
  type PipelineItem,
  type PipelineNameItem,
  pipelineKeys,
  pipelineVersionIs,
} from '#lib/pipelines/pipeline-keys';

/**
 * The access patterns of pipelines (keys and item types: lib/pipelines/pipeline-keys.ts). Writes are
 * answered as items for the caller's transaction, each refused under a reason code:
 *
 * | reason | refused when |
 * |---|---|
 * | `name-taken` | another pipeline of the organization has the name (in any case) |
 * | `stale` | the pipeline is gone or no longer the version the writer read |
 */

export const nextPipelineId = (orgId: string): Promise<number> =>
  nextId(counterKey(pipelineKeys.counter, tenantPk(orgId)));

export async function getPipelineItem(input: { orgId: string; id: number }): Promise<PipelineItem | undefined> {
  const { Item } = await table.get({ Key: pipelineKeys.byId(input.orgId, input.id), ConsistentRead: true });
  return Item as PipelineItem | undefined;
}

/** A page of the organization's pipelines, oldest first (ids are padded, so key order is id order). */
export function pipelinePage(orgId: string, page: PageRequest): Promise<Page<PipelineItem>> {
  return queryPage<PipelineItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': pipelineKeys.prefix },
      // A pipeline created a moment ago shows in the next list.
      ConsistentRead: true,
    },
    page,
  );
}

const nameGuard = (orgId: string, item: Pick<PipelineItem, 'id' | 'name'>): PipelineNameItem => ({
  ...pipelineKeys.byName(orgId, item.name),
  pipeline_id: item.id,
});

/**
 * The writes of a new pipeline: the pipeline and its name guard, refused with `name-taken` when the
 * organization has the name. Both land or neither does, so two concurrent creates of one name give
 * one pipeline and one refusal.
 */
export function newPipelineWrites(orgId: string, item: PipelineItem): TransactItem[] {
  return [
    { Put: { Item: item, ConditionExpression: itemIsNew } },
    { Put: { Item: nameGuard(orgId, item), ConditionExpression: itemIsNew }, reason: 'name-taken' },
  ];
}

/**
 * The writes that replace a pipeline read at `read` with `next` (its version already raised): only
 * while it is still that version (`stale`). A rename moves the guard: the old one is deleted (only if
 * it still names this pipeline) and the new one taken (`name-taken`).
 */
export function pipelineReplaceWrites(orgId: string, read: PipelineItem, next: PipelineItem): TransactItem[] {
  const writes: TransactItem[] = [
    {
      Put: {
        Item: next,
        ConditionExpression: pipelineVersionIs,
        ExpressionAttributeValues: { ':version': read.version },
      },
      reason: 'stale',
    },
  ];
  if (read.name.toLowerCase() !== next.name.toLowerCase()) {
    writes.push(
      { Put: { Item: nameGuard(orgId, next), ConditionExpression: itemIsNew }, reason: 'name-taken' },
      guardRelease(orgId, read),
    );
  }
  return writes;
}

/** The writes that delete a pipeline read at its version (`stale` otherwise) and release its name. */
export function pipelineDeleteWrites(orgId: string, read: PipelineItem): TransactItem[] {
  return [
    {
      Delete: {
        Key: pipelineKeys.byId(orgId, read.id),
        ConditionExpression: pipelineVersionIs,
        ExpressionAttributeValues: { ':version': read.version },
      },
      reason: 'stale',
    },
    guardRelease(orgId, read),
  ];
}

const guardRelease = (orgId: string, item: Pick<PipelineItem, 'id' | 'name'>): TransactItem => ({
  Delete: {
    Key: pipelineKeys.byName(orgId, item.name),
    ConditionExpression: guardNames,
    ExpressionAttributeValues: { ':id': item.id },
  },
  reason: 'stale',
});
