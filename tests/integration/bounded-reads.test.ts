import { describe, expect, it } from 'vitest';
import { firstAgentItems } from '#lib/agents/agent-records';
import { runningExecutionsOf } from '#lib/pipelines/execution-records';
import { countTasksOfStatus, firstTasksOfStatus } from '#lib/tasks/task-queries';
import { seedAgent } from '#tests/support/agents';
import { newUser } from '#tests/support/identity';
import { seedRunningExecution } from '#tests/support/pipelines';
import { createTask, moveTask } from '#tests/support/tasks';

/**
 * The bounded reads behind GET /system/health against DynamoDB Local: each reads up to its cap and says
 * whether anything was left unread, so a report stays cheap however large an organization grows.
 */

/** A running execution in the shared index, started a minute ago and `id` ms later: in the order of the ids. */
const seedRunning = (orgId: string, id: number) =>
  seedRunningExecution(orgId, id, new Date(Date.now() - 60_000 + id).toISOString());

describe('bounded reads', () => {
  it('reads the first agents up to the cap and says whether any were left', async () => {
    // Prepare
    const owner = await newUser('owner');
    for (const name of ['a1', 'a2', 'a3']) await seedAgent(owner.orgId, { name });

    // Act
    const all = await firstAgentItems(owner.orgId, 3);
    const capped = await firstAgentItems(owner.orgId, 2);

    // Assess
    expect(all.items.map((agent) => agent.name)).toEqual(['a1', 'a2', 'a3']);
    expect(all.complete).toBe(true);
    expect(capped.items.map((agent) => agent.name)).toEqual(['a1', 'a2']);
    expect(capped.complete).toBe(false);
  });

  it('reads and counts tasks of one status up to the cap', async () => {
    // Prepare
    const owner = await newUser('owner');
    for (const title of ['t1', 't2', 't3']) {
      const task = await createTask(owner, { title });
      await moveTask(owner, task.id, 'blocked');
    }
    await createTask(owner, { title: 'still todo' });

    // Act
    const blocked = await firstTasksOfStatus(owner.orgId, 'blocked', 5);
    const cappedRead = await firstTasksOfStatus(owner.orgId, 'blocked', 2);
    const counted = await countTasksOfStatus(owner.orgId, 'blocked', 3);
    const cappedCount = await countTasksOfStatus(owner.orgId, 'blocked', 2);

    // Assess
    expect(blocked.items.map((task) => task.title).sort()).toEqual(['t1', 't2', 't3']);
    expect(blocked.complete).toBe(true);
    expect(cappedRead).toMatchObject({ complete: false });
    expect(cappedRead.items).toHaveLength(2);
    expect(counted).toEqual({ count: 3, complete: true });
    expect(cappedCount).toEqual({ count: 2, complete: false });
  });

  it('keeps one organization’s running executions from the shared index, reading no more than allowed', async () => {
    // Prepare: the other organization's executions started first, so they come first in the index.
    const owner = await newUser('owner');
    const other = await newUser('other');
    for (const id of [1, 2, 3]) await seedRunning(other.orgId, id);
    for (const id of [4, 5]) await seedRunning(owner.orgId, id);

    // Act
    const mine = await runningExecutionsOf(owner.orgId, { max: 10, maxRead: 100 });
    const fewReads = await runningExecutionsOf(owner.orgId, { max: 10, maxRead: 3 });
    const one = await runningExecutionsOf(owner.orgId, { max: 1, maxRead: 100 });

    // Assess
    expect(mine.items.map((execution) => execution.id)).toEqual([4, 5]);
    expect(mine.complete).toBe(true);
    expect(fewReads).toEqual({ items: [], complete: false });
    expect(one.items.map((execution) => execution.id)).toEqual([4]);
    expect(one.complete).toBe(false);
  });
});
