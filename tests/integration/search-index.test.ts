import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addPostings, removePostings, searchCandidates } from '#lib/tasks/search-index';

/** The posting maintenance behind GET /tasks?q=, against DynamoDB Local. */
describe('search postings', () => {
  it('keeps a posting that a newer version wrote when an older update removes the word', async () => {
    // Prepare: update 3 removed "deploy", but update 4 (committed meanwhile) put it back.
    const orgId = randomUUID();
    await addPostings(orgId, 7, ['deploy'], 4);

    // Act
    await removePostings(orgId, 7, ['deploy'], 3);

    // Assess
    expect(await searchCandidates(orgId, ['deploy'])).toEqual(new Set([7]));
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
    expect(await searchCandidates(orgId, ['deploy'])).toEqual(new Set([8]));
    expect(await searchCandidates(orgId, ['docs'])).toEqual(new Set());
  });

  it('removes every posting named, whatever its version, when no version is given', async () => {
    // Prepare
    const orgId = randomUUID();
    await addPostings(orgId, 9, ['release', 'notes'], 12);

    // Act
    await removePostings(orgId, 9, ['release', 'notes']);

    // Assess
    expect(await searchCandidates(orgId, ['release'])).toEqual(new Set());
    expect(await searchCandidates(orgId, ['notes'])).toEqual(new Set());
  });
});
