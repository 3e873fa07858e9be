import { beforeAll, describe, expect, it } from 'vitest';
import { handler as apiKeys } from '#functions/http/api-keys';
import { handler as tasks } from '#functions/http/tasks';
import { pad, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { moveAllLegacyLinks, moveLegacyLinks } from '#lib/tasks/task-blocks-migration';
import { type TaskItem, taskKeys } from '#lib/tasks/task-keys';
import { taskReplace } from '#lib/tasks/task-records';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { as, createTask, patchTask, type TaskRecord } from '#tests/support/tasks';

/**
 * A task carries the tasks that depend on it (`blocks`) beside `depends_on`, kept in step by the writes
 * that change dependencies, so that GET /tasks/{id} reads one item: right after every change, under
 * concurrent writes to the same tasks, after deletions, and for links written before (the migration).
 */

beforeAll(async () => {
  await newUser('instanceadmin');
});

const getTask = (user: TestUser, id: number) => call(tasks, 'GET', `/tasks/${id}`, as(user));
const blocksOf = async (user: TestUser, id: number) =>
  (await getTask(user, id)).body.data.blocking.blocks.map((ref: { id: number }) => ref.id);
const ref = (task: TaskRecord) => ({ id: task.id, title: task.title, status: task.status });

async function storedTask(orgId: string, id: number): Promise<TaskItem> {
  const { Item } = await table.get({ Key: taskKeys.byId(orgId, id), ConsistentRead: true });
  return Item as TaskItem;
}

describe('blocking information on the task', () => {
  it('is right after each create, replace, clear and delete of a dependency', async () => {
    // Prepare
    const owner = await newUser('owner');
    const base = await createTask(owner, { title: 'Base' });
    const other = await createTask(owner, { title: 'Other' });

    // Act
    const first = await createTask(owner, { title: 'First', depends_on: [base.id] });
    const afterCreate = await blocksOf(owner, base.id);
    const second = await createTask(owner, { title: 'Second', depends_on: [base.id, other.id] });
    const afterSecond = await blocksOf(owner, base.id);
    await patchTask(owner, first.id, { depends_on: [other.id] });
    const afterReplace = await Promise.all([blocksOf(owner, base.id), blocksOf(owner, other.id)]);
    const key = await call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
      token: owner.token,
      body: { name: 'admin', scopes: ['admin'] },
    });
    await call(tasks, 'DELETE', `/tasks/${second.id}`, { token: key.body.data.key });
    const afterDelete = await Promise.all([blocksOf(owner, base.id), blocksOf(owner, other.id)]);
    const fetched = await getTask(owner, other.id);

    // Assess
    expect(afterCreate).toEqual([first.id]);
    expect(afterSecond).toEqual([first.id, second.id]);
    expect(afterReplace).toEqual([[second.id], [first.id, second.id]]);
    expect(afterDelete).toEqual([[], [first.id]]);
    expect(fetched.body.data.blocking).toEqual({ blocked_by: [], blocks: [ref(first)], is_blocked: false });
    expect((await storedTask(owner.orgId, base.id)).blocks).toBeUndefined();
  });

  it('loses no dependent to a write of the task made from a read before the dependent came', async () => {
    // Prepare: a writer reads the task, then a new task comes to depend on it.
    const owner = await newUser('owner');
    const base = await createTask(owner, { title: 'Read early' });
    const read = await storedTask(owner.orgId, base.id);
    const dependent = await createTask(owner, { title: 'Came later', depends_on: [base.id] });

    // Act: the writer puts back what it read, on condition of the version it read, as every task write does.
    const late = await transact([taskReplace({ ...read, title: 'Written late' }, read.version)]).catch(
      (error: Error) => error,
    );
    const renamed = await patchTask(owner, base.id, { title: 'Written after reading again' });

    // Assess
    expect(isConditionFailed(late, 'stale')).toBe(true);
    expect(renamed.status).toBe(200);
    expect(await blocksOf(owner, base.id)).toEqual([dependent.id]);
  });
});

describe('moving dependent links written before tasks carried blocks', () => {
  /** A link as the service wrote it before: `TASKBLOCKS#<task>#<dependent>`, nothing on the task. */
  const legacyLink = (orgId: string, taskId: number, dependentId: number) =>
    table.put({
      Item: { pk: tenantPk(orgId), sk: `TASKBLOCKS#${pad(taskId)}#${pad(dependentId)}`, task_id: dependentId },
    });

  /** A task written as before: its dependencies, no `blocks` on the tasks it depends on. */
  async function legacyDependent(owner: TestUser, title: string, dependsOn: number[]): Promise<number> {
    const task = await createTask(owner, { title, depends_on: dependsOn });
    for (const id of dependsOn) {
      await table.update({
        Key: taskKeys.byId(owner.orgId, id),
        UpdateExpression: 'REMOVE blocks',
      });
      await legacyLink(owner.orgId, id, task.id);
    }
    return task.id;
  }

  it('puts the links still true onto their tasks, drops the others, and moves nothing twice', async () => {
    // Prepare
    const owner = await newUser('legacy');
    const base = await createTask(owner, { title: 'Base' });
    const dependent = await legacyDependent(owner, 'Depends on base', [base.id]);
    await legacyLink(owner.orgId, base.id, 9999); // a dependent that no longer exists
    const before = await blocksOf(owner, base.id);

    // Act
    const first = await moveLegacyLinks(owner.orgId);
    const again = await moveAllLegacyLinks();
    const after = await blocksOf(owner, base.id);
    const { Items: links = [] } = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(owner.orgId), ':prefix': 'TASKBLOCKS#' },
      ConsistentRead: true,
    });

    // Assess
    expect(before).toEqual([]);
    expect(first).toEqual({ moved: 1, dropped: 1 });
    expect(again).toMatchObject({ moved: 0, dropped: 0 });
    expect(after).toEqual([dependent]);
    expect(links).toEqual([]);
  });

  it('lets a task linked before the move be deleted without leaving its dependents naming it', async () => {
    // Prepare
    const owner = await newUser('legacy');
    const base = await createTask(owner, { title: 'Goes away' });
    const dependent = await legacyDependent(owner, 'Depended on it', [base.id]);
    const key = await call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
      token: owner.token,
      body: { name: 'admin', scopes: ['admin'] },
    });

    // Act
    const deleted = await call(tasks, 'DELETE', `/tasks/${base.id}`, { token: key.body.data.key });
    const fetched = await getTask(owner, dependent);

    // Assess
    expect(deleted.status).toBe(200);
    expect(fetched.body.data.depends_on).toEqual([]);
  });
});
