import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addPostings, removePostings } from '#lib/tasks/search-index';
import { postedIds } from '#tests/support/task-terms';

/** The posting maintenance behind GET /tasks?q=, against DynamoDB Local. */

describe('search postings', () => {
  it('keeps a posting that a newer version wrote when an older update removes the term', async () => {
    // Prepare: update 3 removed "deploy", but update 4 (committed meanwhile) put it back.
    const orgId = randomUUID();
    await addPostings(orgId, 7, ['deploy'], 4);

    // Act
    await removePostings(orgId, 7, ['deploy'], 3);

    // Assess
    expect(await postedIds(orgId, 'deploy')).toEqual([7]);
  });

  it('removes postings written for the removing version or an earlier one', async () => {
    // Prepare
    const orgId = randomUUID();
    await addPostings(orgId, 7, ['deploy', 'docs'], 2);
    await addPostings(orgId, 8, ['deploy'], 5);

    // Act
    await removePostings(orgId, 7, ['deploy'], 2);
    await removePostings(orgId, 7, ['docs'], 6);
    await removePostings(orgId, 7, ['never-indexed'], 6);

    // Assess
    expect(await postedIds(orgId, 'deploy')).toEqual([8]);
    expect(await postedIds(orgId, 'docs')).toEqual([]);
  });

  it('removes every posting named, whatever its version, when no version is given', async () => {
    // Prepare
    const orgId = randomUUID();
    await addPostings(orgId, 9, ['release', 'notes'], 12);

    // Act
    await removePostings(orgId, 9, ['release', 'notes']);

    // Assess
    expect(await postedIds(orgId, 'release')).toEqual([]);
    expect(await postedIds(orgId, 'notes')).toEqual([]);
  });

  it('reads one term exactly: the postings of a longer term are not among a shorter one’s', async () => {
    // Prepare
    const orgId = randomUUID();
    await addPostings(orgId, 3, ['de', 'dep'], 1);
    await addPostings(orgId, 4, ['de', 'dep', 'depl'], 1);
    await addPostings(orgId, 12, ['de'], 1);

    // Act
    const [de, dep, depl] = await Promise.all(['de', 'dep', 'depl'].map((term) => postedIds(orgId, term)));

    // Assess: newest (highest id) first, each term its own.
    expect(de).toEqual([12, 4, 3]);
    expect(dep).toEqual([4, 3]);
    expect(depl).toEqual([4]);
  });
});
