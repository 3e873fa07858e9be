import { beforeAll, describe, expect, it } from 'vitest';
import { handler as apiKeys } from '#functions/http/api-keys';
import { handler as tasks } from '#functions/http/tasks';
import { writeMany } from '#lib/db/batch';
import { table } from '#lib/db/table';
import { addPostings, legacyPostingKeys, matchesSearch, removePostings, taskTerms } from '#lib/tasks/search-index';
import { indexAllTasksWithoutTerms, indexTask, indexTasksWithoutTerms } from '#lib/tasks/search-migration';
import type { TaskItem } from '#lib/tasks/task-keys';
import { taskKeys } from '#lib/tasks/task-keys';
import { getTaskItem } from '#lib/tasks/task-records';
import { type SearchLimits, searchTasks } from '#lib/tasks/task-search';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { indexedTerms, postedIds } from '#tests/support/task-terms';
import { createTask, idsOf, listPublicTasks, listTasks, patchTask, type TaskRecord } from '#tests/support/tasks';

/**
 * Task search as it reads a page at a time (lib/tasks/task-search.ts) over the term index it keeps
 * (lib/tasks/search-index.ts), against DynamoDB Local: the postings each write leaves, paging through
 * matches newest first, several words, totals and their estimates, and the migration of tasks indexed
 * before the term index. Each test acts in an organization of its own (30 task creations a minute).
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps the others ordinary.
  await newUser('instanceadmin');
});

const created = (user: TestUser, body: Record<string, unknown>): Promise<TaskRecord> => createTask(user, body);

/** Tasks `titles` created one after the other (ids rising), answered in that order. */
async function createdInOrder(user: TestUser, titles: string[]): Promise<TaskRecord[]> {
  const made: TaskRecord[] = [];
  for (const title of titles) made.push(await created(user, { title }));
  return made;
}

async function deleted(user: TestUser, id: number): Promise<void> {
  const key = await call(apiKeys, 'POST', `/organizations/${user.orgId}/api-keys`, {
    token: user.token,
    body: { name: 'admin', scopes: ['admin'] },
  });
  const response = await call(tasks, 'DELETE', `/tasks/${id}`, { token: key.body.data.key });
  if (response.status !== 200) throw new Error(`delete failed: ${JSON.stringify(response.body)}`);
}

const newestFirst = (records: TaskRecord[]) => records.map((task) => task.id).sort((a, b) => b - a);

describe('the term index of tasks', () => {
  it('holds exactly the terms of a task’s text, through create, update and delete', async () => {
    // Prepare
    const owner = await newUser('terms');

    // Act
    const task = await created(owner, { title: 'Deploy docs', description: 'Ship it' });
    const afterCreate = await indexedTerms(owner.orgId, task.id);
    await patchTask(owner, task.id, { title: 'Release notes' });
    const afterUpdate = await indexedTerms(owner.orgId, task.id);
    await patchTask(owner, task.id, { priority: 'P0' });
    const afterOtherChange = await indexedTerms(owner.orgId, task.id);
    await deleted(owner, task.id);
    const afterDelete = await indexedTerms(owner.orgId, task.id);

    // Assess
    expect(afterCreate).toEqual(taskTerms({ title: 'Deploy docs', description: 'Ship it' }));
    expect(afterUpdate).toEqual(taskTerms({ title: 'Release notes', description: 'Ship it' }));
    expect(afterUpdate.has('deploy')).toBe(false);
    expect(afterOtherChange).toEqual(afterUpdate);
    expect(afterDelete).toEqual(new Set());
  });
});

describe('GET /tasks?q, a page at a time', () => {
  it('pages through the matches of a word, newest first, with exact totals', async () => {
    // Prepare
    const owner = await newUser('paging');
    const matching = await createdInOrder(
      owner,
      Array.from({ length: 7 }, (_, n) => `Nebula survey ${n}`),
    );
    await createdInOrder(owner, ['Unrelated chore', 'Another chore']);

    // Act
    const pages = [];
    for (const offset of ['0', '3', '6', '9']) pages.push(await listTasks(owner, { q: 'nebu', limit: '3', offset }));

    // Assess
    expect(pages.map((page) => page.body.meta)).toEqual(
      ['0', '3', '6', '9'].map((offset) => ({ total: 7, limit: 3, offset: Number(offset) })),
    );
    expect(pages.flatMap(idsOf)).toEqual(newestFirst(matching));
    expect(pages.map((page) => idsOf(page).length)).toEqual([3, 3, 1, 0]);
  });

  it('answers tasks holding every word, each word beginning one of theirs, in any order', async () => {
    // Prepare
    const owner = await newUser('words');
    const [both, alphaOnly, betaOnly, all] = await createdInOrder(owner, [
      'Alpha beta',
      'Alpha report',
      'Beta gamma',
      'Gamma alpha betamax',
    ]);

    // Act
    const alphaBeta = await listTasks(owner, { q: 'alpha beta' });
    const reversed = await listTasks(owner, { q: 'BET alph' });
    const implied = await listTasks(owner, { q: 'al alpha' });
    const three = await listTasks(owner, { q: 'gamma alpha beta' });
    const paged = await listTasks(owner, { q: 'beta', limit: '2', offset: '1' });
    const none = await listTasks(owner, { q: 'alpha delta' });

    // Assess
    expect(alphaBeta.body.meta).toEqual({ total: 2, limit: 50, offset: 0 });
    expect(idsOf(alphaBeta)).toEqual([all?.id, both?.id]);
    expect(idsOf(reversed)).toEqual([all?.id, both?.id]);
    expect(idsOf(implied)).toEqual([all?.id, alphaOnly?.id, both?.id]);
    expect(idsOf(three)).toEqual([all?.id]);
    expect(paged.body).toEqual({ data: [betaOnly, both], meta: { total: 3, limit: 2, offset: 1 } });
    expect(none.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
  });

  it('pages through words combined with filters', async () => {
    // Prepare
    const owner = await newUser('filtered');
    const made: TaskRecord[] = [];
    for (let n = 0; n < 9; n += 1) {
      made.push(await created(owner, { title: `Orbit burn ${n}`, assignee: n % 3 === 0 ? 'alice' : 'bob' }));
    }
    const alices = made.filter((task) => task.assignee === 'alice');

    // Act
    const first = await listTasks(owner, { q: 'orbit', assignee: 'alice', limit: '2' });
    const second = await listTasks(owner, { q: 'orbit', assignee: 'alice', limit: '2', offset: '2' });
    const publicList = await listPublicTasks(owner, { q: 'orbit burn', assigned_to: 'alice' });

    // Assess
    expect([...idsOf(first), ...idsOf(second)]).toEqual(newestFirst(alices));
    expect(first.body.meta).toEqual({ total: 3, limit: 2, offset: 0 });
    expect(second.body.meta).toEqual({ total: 3, limit: 2, offset: 2 });
    expect(idsOf(publicList)).toEqual(newestFirst(alices));
  });

  it('passes over postings of tasks that are not there, and says when its total is an estimate', async () => {
    // Prepare: two tasks, and a thousand postings of tasks never created (the leftovers of failed writes).
    const owner = await newUser('estimate');
    const real = await createdInOrder(owner, ['Zephyr one', 'Zephyr two']);
    const ghosts = Array.from({ length: 1000 }, (_, n) => 1_000_000 + n);
    await Promise.all(ghosts.map((id) => addPostings(owner.orgId, id, ['zephyr'], 1)));

    // Act
    const found = await listTasks(owner, { q: 'zephyr', limit: '200' });
    const publicFound = await listPublicTasks(owner, { q: 'zephyr', limit: '200' });
    await Promise.all(ghosts.map((id) => removePostings(owner.orgId, id, ['zephyr'])));
    const counted = await listTasks(owner, { q: 'zephyr', limit: '200' });

    // Assess
    expect(idsOf(found)).toEqual(newestFirst(real));
    expect(found.body.meta).toEqual({ total: 1000, limit: 200, offset: 0, total_exact: false });
    expect(publicFound.body.meta).toEqual({ total: 1000, limit: 200, offset: 0, total_exact: false });
    expect(counted.body.meta).toEqual({ total: 2, limit: 200, offset: 0 });
  });
});

describe('searchTasks within its limits', () => {
  const limits: SearchLimits = { countedUpTo: 5, examinedInFull: 2, maxExamined: 6 };
  const wordsSearch = (queryWords: string[], filter: (item: TaskItem) => boolean = () => true) => ({
    queryWords,
    matches: (item: TaskItem) => matchesSearch(queryWords, item) && filter(item),
    filtered: false,
  });

  it('estimates what it did not count, exactly where it saw every match', async () => {
    // Prepare: twelve tasks with "orbit", four of them with "lunar" too.
    const owner = await newUser('limits');
    const made = await createdInOrder(
      owner,
      Array.from({ length: 12 }, (_, n) => `Orbit ${n % 3 === 0 ? 'lunar' : 'solar'} ${n}`),
    );
    const lunar = newestFirst(made.filter((task) => task.title.includes('lunar')));
    const ids = (page: { items: TaskItem[] }) => page.items.map((item) => item.id);

    // Act
    const oneWord = await searchTasks(owner.orgId, wordsSearch(['orbit']), { limit: 3, offset: 0 }, limits);
    const deep = await searchTasks(owner.orgId, wordsSearch(['orbit']), { limit: 3, offset: 9 }, limits);
    const walked = await searchTasks(owner.orgId, wordsSearch(['orbit', 'lunar']), { limit: 2, offset: 0 }, limits);
    const walkedOut = await searchTasks(owner.orgId, wordsSearch(['orbit', 'lunar']), { limit: 2, offset: 2 }, limits);
    const cutShort = await searchTasks(
      owner.orgId,
      { ...wordsSearch(['orbit'], (item) => item.status === 'done'), filtered: true },
      { limit: 2, offset: 0 },
      limits,
    );

    // Assess
    expect(oneWord).toEqual({ items: expect.any(Array), total: 5, exact: false, more: true });
    expect(ids(oneWord)).toEqual(newestFirst(made).slice(0, 3));
    expect(ids(deep)).toEqual(newestFirst(made).slice(9));
    expect(deep).toMatchObject({ total: 12, exact: false, more: false });
    // "lunar" (4 postings) is the rarest word: its newest two match, the other two are not looked at.
    expect(ids(walked)).toEqual(lunar.slice(0, 2));
    expect(walked).toMatchObject({ total: 4, exact: false, more: true });
    expect(ids(walkedOut)).toEqual(lunar.slice(2));
    expect(walkedOut).toMatchObject({ total: 4, exact: true, more: false });
    // No task is done: the walk stops after six candidates, and says its (zero) total is not a count.
    expect(cutShort).toEqual({ items: [], total: 0, exact: false, more: true });
  });
});

describe('indexing the tasks written before the term index', () => {
  /** Turns a task back into one the service wrote before: whole-word postings, no terms, no mark. */
  async function makeLegacy(orgId: string, task: TaskRecord, words: string[]): Promise<void> {
    await removePostings(
      orgId,
      task.id,
      taskTerms({ title: task.title, description: task.description as string | null }),
    );
    await table.update({ Key: taskKeys.byId(orgId, task.id), UpdateExpression: 'REMOVE terms_indexed' });
    await writeMany({
      puts: legacyPostingKeys(orgId, task.id, words).map((key) => ({ ...key, task_id: task.id, version: 1 })),
    });
  }

  async function legacyPostingsLeft(orgId: string, taskId: number, words: string[]): Promise<number> {
    const found = await Promise.all(
      legacyPostingKeys(orgId, taskId, words).map((Key) => table.get({ Key, ConsistentRead: true })),
    );
    return found.filter((result) => result.Item).length;
  }

  it('indexes them, marks them and deletes their whole-word postings, once', async () => {
    // Prepare
    const owner = await newUser('migrate');
    const old = await created(owner, { title: 'Quasar audit', description: 'Legacy text' });
    await makeLegacy(owner.orgId, old, ['quasar', 'audit', 'legacy', 'text']);
    const before = await listTasks(owner, { q: 'quasar' });

    // Act
    const first = await indexTasksWithoutTerms(owner.orgId);
    const again = await indexTasksWithoutTerms(owner.orgId);
    const everywhere = await indexAllTasksWithoutTerms();
    const after = await listTasks(owner, { q: 'quasar leg' });

    // Assess
    expect(idsOf(before)).toEqual([]);
    expect(first).toEqual({ indexed: 1, legacyRemoved: 4 });
    expect(again).toEqual({ indexed: 0, legacyRemoved: 0 });
    expect(everywhere.organizations).toBeGreaterThanOrEqual(2);
    expect(idsOf(after)).toEqual([old.id]);
    expect(await indexedTerms(owner.orgId, old.id)).toEqual(
      taskTerms({ title: 'Quasar audit', description: 'Legacy text' }),
    );
    expect((await getTaskItem({ orgId: owner.orgId, id: old.id, consistent: true }))?.terms_indexed).toBe(true);
    expect(await legacyPostingsLeft(owner.orgId, old.id, ['quasar', 'audit', 'legacy', 'text'])).toBe(0);
  });

  it('indexes one on its next write, whatever that write changes', async () => {
    // Prepare
    const owner = await newUser('legacywrite');
    const old = await created(owner, { title: 'Pulsar check' });
    await makeLegacy(owner.orgId, old, ['pulsar', 'check']);

    // Act
    await patchTask(owner, old.id, { priority: 'P1' });
    const found = await listTasks(owner, { q: 'puls' });

    // Assess
    expect(idsOf(found)).toEqual([old.id]);
    expect(await indexedTerms(owner.orgId, old.id)).toEqual(taskTerms({ title: 'Pulsar check' }));
    expect(await legacyPostingsLeft(owner.orgId, old.id, ['pulsar', 'check'])).toBe(0);
  });

  it('takes a task that changed while it was being indexed again, and leaves no posting of the old text', async () => {
    // Prepare: the migration read version 1 of two tasks; one then changed without being indexed (its
    // dependencies went), the other was renamed by an update, which indexes it.
    const owner = await newUser('migraterace');
    const moved = await created(owner, { title: 'Comet trail' });
    const renamed = await created(owner, { title: 'Nova burst' });
    await makeLegacy(owner.orgId, moved, ['comet', 'trail']);
    await makeLegacy(owner.orgId, renamed, ['nova', 'burst']);
    const read = async (id: number) => (await getTaskItem({ orgId: owner.orgId, id, consistent: true })) as TaskItem;
    const [movedRead, renamedRead] = [await read(moved.id), await read(renamed.id)];
    await table.update({
      Key: taskKeys.byId(owner.orgId, moved.id),
      UpdateExpression: 'SET title = :title, version = :next',
      ExpressionAttributeValues: { ':title': 'Meteor trail', ':next': movedRead.version + 1 },
    });
    await patchTask(owner, renamed.id, { title: 'Supernova burst' });

    // Act
    const movedMarked = await indexTask(owner.orgId, movedRead);
    const renamedMarked = await indexTask(owner.orgId, renamedRead);

    // Assess
    expect([movedMarked, renamedMarked]).toEqual([true, false]);
    expect(await postedIds(owner.orgId, 'comet')).toEqual([]);
    expect(await postedIds(owner.orgId, 'nova')).toEqual([]);
    expect(await indexedTerms(owner.orgId, moved.id)).toEqual(taskTerms({ title: 'Meteor trail' }));
    expect(await indexedTerms(owner.orgId, renamed.id)).toEqual(taskTerms({ title: 'Supernova burst' }));
  });
});
