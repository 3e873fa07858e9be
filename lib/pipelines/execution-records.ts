import { getMany } from '#lib/db/batch';
import { itemIsNew } from '#lib/db/conditions';
import { counterKey, nextId } from '#lib/db/counters';
import { tenantPk } from '#lib/db/keys';
import { type Bounded, type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import type { TransactItem } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import {
  type ExecutionItem,
  type ExecutionStatus,
  executionKeys,
  FINISHED_EXECUTION,
  type StageItem,
  type StageStatus,
} from '#lib/pipelines/execution-keys';

/**
 * The access patterns of executions and their stages (keys and item types: lib/pipelines/execution-keys.ts).
 * Every status change is a conditional update from the statuses it may leave, so that of two writers
 * racing on one stage (a duplicate message, a cancel) exactly one wins and the other learns it lost.
 *
 * | reason | refused when |
 * |---|---|
 * | `stage-moved` | the stage is no longer in the status (and attempt) the writer expects |
 * | `execution-ended` | the execution is no longer running (cancelled, failed) |
 * | `execution-moved` | a rerun's execution is no longer in the status read, or was rerun since |
 */

/** TransactWriteItems takes at most 100 items. */
export const TRANSACTION_LIMIT = 100;

export const nextExecutionId = (orgId: string): Promise<number> =>
  nextId(counterKey(executionKeys.counter, tenantPk(orgId)));

export async function getExecutionItem(input: {
  orgId: string;
  pipelineId: number;
  id: number;
}): Promise<ExecutionItem | undefined> {
  const { Item } = await table.get({
    Key: executionKeys.byId(input.orgId, input.pipelineId, input.id),
    ConsistentRead: true,
  });
  return Item as ExecutionItem | undefined;
}

/** Every stage of an execution (at most 200), strongly consistent: one Query, paged through. */
export async function stageItems(orgId: string, executionId: number): Promise<StageItem[]> {
  const page = await queryPage<StageItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': executionKeys.stagesOf(executionId) },
      ConsistentRead: true,
    },
    { limit: Number.MAX_SAFE_INTEGER, offset: 0 },
  );
  return page.items;
}

/** One stage, strongly consistent. */
export async function getStageItem(orgId: string, executionId: number, name: string): Promise<StageItem | undefined> {
  const { Item } = await table.get({ Key: executionKeys.stage(orgId, executionId, name), ConsistentRead: true });
  return Item as StageItem | undefined;
}

/** The named stages of an execution that exist, strongly consistent (one BatchGetItem per 100). */
export async function stagesNamed(orgId: string, executionId: number, names: string[]): Promise<StageItem[]> {
  const keys = names.map((name) => executionKeys.stage(orgId, executionId, name));
  const found = await getMany<StageItem>(keys, { consistent: true });
  return found.filter((item): item is StageItem => item !== undefined);
}

/**
 * The executions still running, oldest first: Queries of the running index, which holds only those. The
 * index is eventually consistent: callers read each execution again before acting on it.
 */
export async function runningExecutionItems(): Promise<ExecutionItem[]> {
  const items: ExecutionItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': executionKeys.runningPk },
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    items.push(...((result.Items ?? []) as ExecutionItem[]));
    start = result.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * One organization's running executions, oldest first, at most `max`: the running index is shared by
 * every organization, so a DynamoDB filter on the items' partition key keeps this one's, reading at most
 * `maxRead` index entries. `complete` is false when entries were left unread.
 */
export async function runningExecutionsOf(
  orgId: string,
  bounds: { max: number; maxRead: number },
): Promise<Bounded<ExecutionItem>> {
  const items: ExecutionItem[] = [];
  let read = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      // The index's own keys cannot be filtered on; the table's partition key names the organization.
      FilterExpression: 'pk = :tenant',
      ExpressionAttributeValues: { ':pk': executionKeys.runningPk, ':tenant': tenantPk(orgId) },
      Limit: bounds.maxRead - read,
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    read += result.ScannedCount ?? 0;
    items.push(...((result.Items ?? []) as ExecutionItem[]));
    start = result.LastEvaluatedKey;
  } while (start && items.length < bounds.max && read < bounds.maxRead);
  return { items: items.slice(0, bounds.max), complete: start === undefined && items.length <= bounds.max };
}

/** A page of a pipeline's executions, newest first. */
export function executionPage(
  orgId: string,
  pipelineId: number,
  page: PageRequest,
  keep?: (item: ExecutionItem) => boolean,
): Promise<Page<ExecutionItem>> {
  return queryPage<ExecutionItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': executionKeys.ofPipeline(pipelineId) },
      ScanIndexForward: false,
      ConsistentRead: true,
    },
    page,
    keep,
  );
}

/**
 * The transactions that write a new execution: its stages in groups of at most 99, the execution item
 * in the last one. Readers find an execution by its own item only, so until the last transaction lands
 * nothing of it is visible, and a crash in between leaves only unreachable stage items.
 *
 * `reserved` items of the last transaction are left free for the caller's own writes, which then land
 * with the execution item or not at all (the git webhook commits its delivery's seen guard and the
 * deployment so: lib/deployments/deploy-pipeline.ts). The execution item goes alone in a transaction of
 * its own when the last group of stages leaves no room for it and them.
 */
export function newExecutionTransactions(
  execution: ExecutionItem,
  stages: StageItem[],
  reserved = 0,
): TransactItem[][] {
  const puts: TransactItem[] = stages.map((Item) => ({ Put: { Item, ConditionExpression: itemIsNew } }));
  const groups: TransactItem[][] = [];
  for (let start = 0; start < puts.length; start += TRANSACTION_LIMIT - 1) {
    groups.push(puts.slice(start, start + TRANSACTION_LIMIT - 1));
  }
  const last = groups.at(-1);
  const executionPut: TransactItem = { Put: { Item: execution, ConditionExpression: itemIsNew } };
  if (last && last.length + 1 + reserved <= TRANSACTION_LIMIT) last.push(executionPut);
  else groups.push([executionPut]);
  return groups;
}

const statusIn = (field: string, statuses: readonly string[]) =>
  `${field} IN (${statuses.map((_, at) => `:from${at}`).join(', ')})`;
const fromValues = (statuses: readonly string[]) =>
  Object.fromEntries(statuses.map((status, at) => [`:from${at}`, status]));

function setClause(changes: Record<string, unknown>) {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = {};
  const parts = Object.entries(changes).map(([field, value], at) => {
    names[`#f${at}`] = field;
    values[`:v${at}`] = value;
    return `#f${at} = :v${at}`;
  });
  return { expression: `SET ${parts.join(', ')}`, names, values };
}

/**
 * The update of a stage from one of `from` to `changes` (which names its new `status`), refused with
 * `stage-moved` otherwise; `attempts`, when given, must also still be that number.
 */
export function stageUpdate(
  orgId: string,
  stage: { execution_id: number; name: string },
  from: readonly StageStatus[],
  changes: Partial<StageItem> & { status: StageStatus },
  attempts?: number,
): TransactItem {
  const set = setClause(changes);
  const conditions = [statusIn('#status', from), ...(attempts === undefined ? [] : ['attempts = :attempts'])];
  return {
    Update: {
      Key: executionKeys.stage(orgId, stage.execution_id, stage.name),
      UpdateExpression: set.expression,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: set.names,
      ExpressionAttributeValues: {
        ...set.values,
        ...fromValues(from),
        ...(attempts === undefined ? {} : { ':attempts': attempts }),
      },
    },
    reason: 'stage-moved',
  };
}

/**
 * The update of an execution from one of `from` to `changes`, refused with `execution-ended` otherwise.
 * An update that ends it takes it out of the running index.
 */
export function executionUpdate(
  orgId: string,
  execution: { pipeline_id: number; id: number },
  from: readonly ExecutionStatus[],
  changes: Partial<ExecutionItem> & { status: ExecutionStatus },
): TransactItem {
  const set = setClause(changes);
  const ends = FINISHED_EXECUTION.has(changes.status);
  return {
    Update: {
      Key: executionKeys.byId(orgId, execution.pipeline_id, execution.id),
      UpdateExpression: ends ? `${set.expression} REMOVE gsi1pk, gsi1sk` : set.expression,
      ConditionExpression: statusIn('#status', from),
      ExpressionAttributeNames: set.names,
      ExpressionAttributeValues: { ...set.values, ...fromValues(from) },
    },
    reason: 'execution-ended',
  };
}

/** Runs one conditional update alone: true when it landed, false when its condition refused it. */
export async function tryUpdate(write: TransactItem): Promise<boolean> {
  if (!('Update' in write)) throw new Error('tryUpdate takes an Update');
  try {
    await table.update({ ...write.Update, reason: write.reason ?? 'changed' });
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}

/**
 * Claims attempt `attempt` of a stage: `queued → running` on condition that the stage is queued with
 * `attempt - 1` attempts started. The stage as it now is, or undefined when the claim was refused.
 */
export async function claimStage(
  orgId: string,
  stage: { execution_id: number; name: string },
  attempt: number,
  at: string,
): Promise<StageItem | undefined> {
  const write = stageUpdate(
    orgId,
    stage,
    ['queued'],
    { status: 'running', attempts: attempt, started_at: at, error: null },
    attempt - 1,
  );
  if (!('Update' in write)) throw new Error('stageUpdate gives an Update');
  try {
    const { Attributes } = await table.update({ ...write.Update, reason: 'stage-moved', ReturnValues: 'ALL_NEW' });
    return Attributes as StageItem;
  } catch (error) {
    if (isConditionFailed(error)) return undefined;
    throw error;
  }
}

/**
 * `pending → queued` for a stage whose dependencies have all succeeded (`remaining` 0), without reading
 * it first: of everyone who tries, one lands and gets the stage back (to send its message); the others
 * get undefined.
 */
export async function queueIfReady(
  orgId: string,
  stage: { execution_id: number; name: string },
  at: string,
): Promise<StageItem | undefined> {
  try {
    const { Attributes } = await table.update({
      Key: executionKeys.stage(orgId, stage.execution_id, stage.name),
      UpdateExpression: 'SET #status = :queued, queued_at = :at',
      ConditionExpression: '#status = :pending AND remaining <= :zero',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':queued': 'queued', ':pending': 'pending', ':zero': 0, ':at': at },
      ReturnValues: 'ALL_NEW',
      reason: 'stage-moved',
    });
    return Attributes as StageItem;
  } catch (error) {
    if (isConditionFailed(error)) return undefined;
    throw error;
  }
}

/** Moves every stage of `stages` still in one of `from` to `to` (each conditionally); the names moved. */
export async function moveStages(
  orgId: string,
  stages: StageItem[],
  from: readonly StageStatus[],
  to: StageStatus,
  at: string,
): Promise<string[]> {
  const candidates = stages.filter((stage) => from.includes(stage.status));
  const moved = await Promise.all(
    candidates.map((stage) => tryUpdate(stageUpdate(orgId, stage, from, { status: to, finished_at: at }))),
  );
  return candidates.filter((_, at) => moved[at]).map((stage) => stage.name);
}

/**
 * The condition that a rerun's execution is still as read: in its status (failed, cancelled) and not rerun
 * since (its `reruns` count unchanged), so that of two reruns of one execution only one lands.
 */
function unchangedSinceRead(execution: ExecutionItem) {
  return {
    expression: `#status = :readStatus AND ${
      execution.reruns === undefined ? 'attribute_not_exists(#reruns)' : '#reruns = :readReruns'
    }`,
    names: { '#status': 'status', '#reruns': 'reruns' },
    values: {
      ':readStatus': execution.status,
      ...(execution.reruns === undefined ? {} : { ':readReruns': execution.reruns }),
    },
  };
}

/**
 * A condition that the execution is as read (status and reruns), refused with `execution-moved`: what
 * a stage does because its execution ended does not land once a rerun has set it running again.
 */
export function executionUnchanged(orgId: string, execution: ExecutionItem): TransactItem {
  const unchanged = unchangedSinceRead(execution);
  return {
    ConditionCheck: {
      Key: executionKeys.byId(orgId, execution.pipeline_id, execution.id),
      ConditionExpression: unchanged.expression,
      ExpressionAttributeNames: unchanged.names,
      ExpressionAttributeValues: unchanged.values,
    },
    reason: 'execution-moved',
  };
}

/**
 * The transactions that start a failed or cancelled execution again (lib/pipelines/execution-rerun.ts):
 * the stage writes in groups of at most 99, each with the execution's condition (unchanged since read,
 * reason `execution-moved`), and the update that sets the execution `running` (with `changes`) in the
 * last one. Until that one lands the execution is not running: a crash or a refusal in between leaves
 * it failed or cancelled with some stages already reset, which no reader drives on (the reconciler
 * reads running executions only, a stage message of a failed execution runs nothing) and which a later
 * rerun takes over, since its stages are rerun from whatever status they are in.
 */
export function rerunTransactions(
  orgId: string,
  execution: ExecutionItem,
  changes: Partial<ExecutionItem> & { status: 'running' },
  stageWrites: TransactItem[],
): TransactItem[][] {
  const unchanged = unchangedSinceRead(execution);
  const key = executionKeys.byId(orgId, execution.pipeline_id, execution.id);
  const check: TransactItem = {
    ConditionCheck: {
      Key: key,
      ConditionExpression: unchanged.expression,
      ExpressionAttributeNames: unchanged.names,
      ExpressionAttributeValues: unchanged.values,
    },
    reason: 'execution-moved',
  };
  const set = setClause(changes);
  const flip: TransactItem = {
    Update: {
      Key: key,
      UpdateExpression: set.expression,
      ConditionExpression: unchanged.expression,
      ExpressionAttributeNames: { ...set.names, ...unchanged.names },
      ExpressionAttributeValues: { ...set.values, ...unchanged.values },
    },
    reason: 'execution-moved',
  };
  const groups: TransactItem[][] = [];
  for (let start = 0; start < stageWrites.length; start += TRANSACTION_LIMIT - 1) {
    groups.push(stageWrites.slice(start, start + TRANSACTION_LIMIT - 1));
  }
  if (groups.length === 0) return [[flip]];
  return groups.map((group, at) => [...group, at === groups.length - 1 ? flip : check]);
}
