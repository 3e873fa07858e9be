import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesSearch, postingChange, taskWords, words } from '#lib/tasks/search-index';

describe('words', () => {
  it('splits on anything but letters and digits, lower-cases and removes accents', () => {
    // Act
    const found = words('Fix the Café-menu, v2! ÜBER naïve_test');

    // Assess
    expect(found).toEqual(['fix', 'the', 'cafe', 'menu', 'v2', 'uber', 'naive', 'test']);
  });

  it('keeps letters of other scripts and cuts very long words to 64 characters', () => {
    // Act
    const found = words(`日本語 テスト ${'a'.repeat(80)}`);

    // Assess
    expect(found).toEqual(['日本語', 'テスト', 'a'.repeat(64)]);
  });

  it('finds nothing in punctuation and white space', () => {
    expect(words(' -- !!! ... ')).toEqual([]);
  });
});

describe('matchesSearch', () => {
  const task = { title: 'Deployment checklist', description: 'Review the Café pipeline' };

  it('matches when every query word begins a word of the title or description', () => {
    expect(matchesSearch(['deploy'], task)).toBe(true);
    expect(matchesSearch(['deploy', 'cafe'], task)).toBe(true);
    expect(matchesSearch(['pipe', 'check'], task)).toBe(true);
  });

  it('does not match inside a word, or when one query word is missing', () => {
    expect(matchesSearch(['ploy'], task)).toBe(false);
    expect(matchesSearch(['deploy', 'missing'], task)).toBe(false);
  });

  it('finds a text by each of its own words, whatever the text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), fc.string({ maxLength: 60 }), (title, description) => {
        const own = [...taskWords({ title, description })];
        return own.every((word) => matchesSearch(words(word), { title, description }));
      }),
    );
  });
});

describe('postingChange', () => {
  it('adds the new words and removes the old ones, leaving shared words alone', () => {
    // Act
    const change = postingChange(new Set(['fix', 'login', 'bug']), new Set(['fix', 'signup', 'bug']));

    // Assess
    expect(change).toEqual({ added: ['signup'], removed: ['login'] });
  });
});
