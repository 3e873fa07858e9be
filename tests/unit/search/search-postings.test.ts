import { describe, expect, it } from 'vitest';
import { indexedWords, MAX_INDEXED_WORDS, postingWrites, unchangedSince } from '#lib/search/search-postings';

describe('indexedWords', () => {
  it('takes the distinct words of the fields in order, folded as the task index folds them', () => {
    expect(indexedWords(['Deploy Bot', null, 'deploys the Café, bot'])).toEqual([
      'deploy',
      'bot',
      'deploys',
      'the',
      'cafe',
    ]);
  });

  it('keeps at most 32 words, the first fields’ first', () => {
    // Prepare
    const name = 'alpha beta';
    const description = Array.from({ length: 40 }, (_, n) => `w${n}`).join(' ');

    // Act
    const found = indexedWords([name, description]);

    // Assess
    expect(MAX_INDEXED_WORDS).toBe(32);
    expect(found).toHaveLength(32);
    expect(found.slice(0, 3)).toEqual(['alpha', 'beta', 'w0']);
    expect(found).not.toContain('w30');
  });
});

describe('postingWrites', () => {
  const input = { orgId: 'o1', kind: 'pipeline' as const, ref: '000000000007' };

  it('puts every word of a new record', () => {
    expect(postingWrites({ ...input, after: ['nightly', 'build'] })).toEqual([
      { Put: { Item: { pk: 'T#o1', sk: 'SEARCH#pipeline#nightly#000000000007', kind: 'pipeline', ref: input.ref } } },
      { Put: { Item: { pk: 'T#o1', sk: 'SEARCH#pipeline#build#000000000007', kind: 'pipeline', ref: input.ref } } },
    ]);
  });

  it('puts the words gained and deletes the words lost, leaving the others alone', () => {
    expect(postingWrites({ ...input, before: ['nightly', 'build'], after: ['weekly', 'build'] })).toEqual([
      { Put: { Item: { pk: 'T#o1', sk: 'SEARCH#pipeline#weekly#000000000007', kind: 'pipeline', ref: input.ref } } },
      { Delete: { Key: { pk: 'T#o1', sk: 'SEARCH#pipeline#nightly#000000000007' } } },
    ]);
  });

  it('deletes every word of a record that leaves the index, and writes nothing when no word changes', () => {
    expect(postingWrites({ ...input, before: ['build'] })).toEqual([
      { Delete: { Key: { pk: 'T#o1', sk: 'SEARCH#pipeline#build#000000000007' } } },
    ]);
    expect(postingWrites({ ...input, before: ['build'], after: ['build'] })).toEqual([]);
  });
});

describe('unchangedSince', () => {
  it('holds each field to the value read, and a field read as null to none', () => {
    expect(unchangedSince({ name: 'Acme', tagline: null })).toEqual({
      condition:
        '#read_name = :read_name AND ' +
        '(attribute_not_exists(#read_tagline) OR attribute_type(#read_tagline, :read_nullType))',
      names: { '#read_name': 'name', '#read_tagline': 'tagline' },
      values: { ':read_name': 'Acme', ':read_nullType': 'NULL' },
    });
  });
});
