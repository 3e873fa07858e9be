import { getMany } from '#lib/db/batch';
import { itemExists } from '#lib/db/conditions';
import { prefixEnd, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { type TransactItem, transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { sumOverOrganizations } from '#lib/identity/organizations';
import { blocksChange } from '#lib/tasks/dependencies';
import { type TaskItem, taskKeys, versionIs } from '#lib/tasks/task-keys';

/**
 * The move of the dependent links installations wrote before tasks carried `blocks`: one item per
 * dependency (`T#<org>` / `TASKBLOCKS#<task>#<dependent>`, `task_id`: the dependent), which GET
 * /tasks/{id} had to Query. Each link still true (both tasks exist and the dependent's `depends_on` names
 * the task) becomes the dependent's id in the task's `blocks`, in one transaction that also deletes the
 * link on condition that it is still there and checks the dependent unchanged since it was read; a link
 * no longer true is only deleted. A second run, or two at once, move nothing twice.
 *
 * Run once per installation that has such links: infra/migrations/task-blocks.ts. Until it has run,
 * GET /tasks/{id} leaves out of `blocking.blocks` the dependents linked before the upgrade; deleting a
 * task reads its links too, so that no dependent keeps naming a deleted task.
 */

const LINK_PREFIX = 'TASKBLOCKS#';
const ATTEMPTS = 3;

/** The dependents of task `id` that links written before `blocks` name (none once the move has run). */
export async function legacyDependentsOf(orgId: string, id: number): Promise<number[]> {
  const prefix = taskKeys.dependentsPrefix(id);
  const ids: number[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix, ':end': prefixEnd(prefix) },
      ProjectionExpression: 'task_id',
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    for (const item of result.Items ?? []) ids.push(Number(item.task_id));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return ids;
}

export interface LinkMoveResult {
  moved: number;
  dropped: number;
}

/** Moves one organization's links onto its tasks; answers how many became `blocks` and how many were stale. */
export async function moveLegacyLinks(orgId: string): Promise<LinkMoveResult> {
  const result: LinkMoveResult = { moved: 0, dropped: 0 };
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': LINK_PREFIX, ':end': prefixEnd(LINK_PREFIX) },
      Limit: 100,
      ExclusiveStartKey: startKey,
    });
    for (const link of page.Items ?? []) {
      const outcome = await moveLink(orgId, { pk: String(link.pk), sk: String(link.sk) });
      if (outcome) result[outcome] += 1;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return result;
}

async function moveLink(orgId: string, key: { pk: string; sk: string }): Promise<keyof LinkMoveResult | undefined> {
  // `TASKBLOCKS#<padded task>#<padded dependent>`
  const [, taskId, dependentId] = key.sk.split('#').map(Number) as [number, number, number];
  const removal: TransactItem = { Delete: { Key: key, ConditionExpression: itemExists }, reason: 'moved' };
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const [task, dependent] = await getMany<TaskItem>(
      [taskKeys.byId(orgId, taskId), taskKeys.byId(orgId, dependentId)],
      { consistent: true },
    );
    const holds = task !== undefined && dependent !== undefined && (dependent.depends_on ?? []).includes(taskId);
    const writes: TransactItem[] = holds
      ? [
          {
            ConditionCheck: {
              Key: taskKeys.byId(orgId, dependentId),
              ConditionExpression: versionIs,
              ExpressionAttributeValues: { ':version': dependent.version },
            },
            reason: 'dependent-changed',
          },
          blocksChange({ orgId, id: taskId, dependent: dependentId, add: true, version: undefined }),
          removal,
        ]
      : [removal];
    try {
      await transact(writes);
      return holds ? 'moved' : 'dropped';
    } catch (error) {
      if (isConditionFailed(error, 'moved')) return undefined;
      if (!isConditionFailed(error, 'dependent-changed') && !isConditionFailed(error, 'dependency-changed')) {
        throw error;
      }
    }
  }
  throw new Error(`Task ${dependentId} kept changing while its link to task ${taskId} was moved; run again`);
}

/** Moves the links of every organization. */
export const moveAllLegacyLinks = () =>
  sumOverOrganizations((orgId) => moveLegacyLinks(orgId), { moved: 0, dropped: 0 });
