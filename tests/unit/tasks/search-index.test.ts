import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_TASK_TERMS,
  matchesSearch,
  postingChange,
  searchTerms,
  taskTerms,
  taskWords,
  termChange,
  words,
} from '#lib/tasks/search-index';

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

describe('taskTerms', () => {
  it('indexes every prefix of every word, by character, once', () => {
    // Act
    const terms = taskTerms({ title: 'Fix it', description: 'fixes 日本' });

    // Assess
    expect([...terms]).toEqual(['f', 'fi', 'fix', 'i', 'it', 'fixe', 'fixes', '日', '日本']);
  });

  it('holds every query word that matches the task, so a search by terms misses nothing (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 60 }),
        fc.string({ maxLength: 120 }),
        fc.string({ maxLength: 8 }),
        (title, description, probe) => {
          const task = { title, description };
          const terms = taskTerms(task);
          const prefixes = [...taskWords(task)].flatMap((word) => [word.slice(0, 1), word.slice(0, 3), word]);
          return [...prefixes, ...words(probe)].every((wanted) => !matchesSearch([wanted], task) || terms.has(wanted));
        },
      ),
    );
  });

  it('stops at MAX_TASK_TERMS, the title’s terms first', () => {
    // Prepare: 1,000 eight-letter tokens (hashes, say), of some 6,000 distinct prefixes.
    let seed = 7;
    const letter = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return 'abcdefghijklmnopqrstuvwxyz'[seed % 26];
    };
    const tokens = Array.from({ length: 1000 }, () => Array.from({ length: 8 }, letter).join(''));
    const many = tokens.join(' ');

    // Act
    const terms = taskTerms({ title: 'Quarterly report', description: many });

    // Assess
    expect(terms.size).toBe(MAX_TASK_TERMS);
    expect(terms.has('quarterly')).toBe(true);
    expect(terms.has('report')).toBe(true);
    expect(terms.has(tokens.at(-1) as string)).toBe(false);
  });
});

describe('searchTerms', () => {
  it('keeps the distinct words no other query word begins with', () => {
    expect(searchTerms(['de', 'deploy', 'docs', 'deploy'])).toEqual(['deploy', 'docs']);
    expect(searchTerms(['cafe'])).toEqual(['cafe']);
  });
});

describe('termChange', () => {
  it('adds and removes only the terms that change for an indexed task', () => {
    // Act
    const change = termChange({ title: 'Fix bug', terms_indexed: true }, { title: 'Fix bugs' });

    // Assess
    expect(change).toEqual({ added: ['bugs'], removed: [] });
  });

  it('adds every term of a task written before the term index, and removes those it lost', () => {
    // Act
    const change = termChange({ title: 'Fix it' }, { title: 'Fix' });

    // Assess
    expect(change).toEqual({ added: ['f', 'fi', 'fix'], removed: ['i', 'it'] });
  });

  it('removes every term of a task that goes', () => {
    expect(termChange({ title: 'Go', terms_indexed: true }, undefined)).toEqual({ added: [], removed: ['g', 'go'] });
  });
});
