import { describe, expect, it } from 'vitest';
import { matchesAll, matchingField } from '#lib/search/search-read';

describe('matchesAll', () => {
  const fields = [
    ['name', 'Deploy Bot'],
    ['role', 'Ships the Café site'],
  ] as const;

  it('needs every query word to begin a word of some field', () => {
    expect(matchesAll(['dep', 'cafe'], fields)).toBe(true);
    expect(matchesAll(['dep', 'tea'], fields)).toBe(false);
    expect(matchesAll(['ploy'], fields)).toBe(false);
  });
});

describe('matchingField', () => {
  it('quotes the first field that matches, the title before the others', () => {
    expect(
      matchingField(
        ['ship'],
        [
          ['name', 'Release'],
          ['description', 'Ships the site'],
        ],
      ),
    ).toEqual({ field: 'description', snippet: 'Ships the site' });
  });

  it('cuts a long field around the match, folding white space and marking the cuts', () => {
    // Prepare
    const text = `${'lorem '.repeat(30)}the Crème\n\nbrûlée recipe ${'ipsum '.repeat(40)}`;

    // Act
    const { snippet } = matchingField(['creme'], [['description', text]]);

    // Assess
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet).toContain('the Crème brûlée recipe');
    expect(snippet.indexOf('Crème')).toBeGreaterThan(30);
    expect(snippet.length).toBeLessThanOrEqual(162);
  });

  it('never splits a character made of two UTF-16 units', () => {
    const text = `${'🚀'.repeat(100)} rocket`;
    const { snippet } = matchingField(['rocket'], [['title', text]]);
    // 40 code points before the match: 39 rockets and the space.
    expect(snippet).toBe(`…${'🚀'.repeat(39)} rocket`);
  });
});
