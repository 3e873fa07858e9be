import { describe, expect, it } from 'vitest';
import {
  firstFreeSlug,
  numberedSlug,
  numberedSlugPrefix,
  PRODUCT_SLUG_MAX,
  PRODUCT_SLUG_PATTERN,
  slugFromName,
} from '#lib/products/product-slug';

describe('slugFromName', () => {
  it.each([
    ['Acme', 'acme'],
    ['  Acme Robotics: Ops!  ', 'acme-robotics-ops'],
    ['Launch -- Pad 2.0', 'launch-pad-2-0'],
    ['__Hidden__', 'hidden'],
    ['Café Noir', 'caf-noir'],
    ['!!!', ''],
    ['日本語', ''],
  ])('%j gives %j', (name, expected) => {
    expect(slugFromName(name)).toBe(expected);
  });

  it('keeps at most 64 characters and never ends in a hyphen', () => {
    // Prepare
    const name = `${'a'.repeat(63)} b`;

    // Act
    const slug = slugFromName(name);

    // Assess
    expect(slug).toBe('a'.repeat(63));
    expect(slug).toMatch(PRODUCT_SLUG_PATTERN);
  });
});

describe('numberedSlug', () => {
  it('is the base first, then the base with -2, -3, …', () => {
    expect([1, 2, 3, 10].map((n) => numberedSlug('acme', n))).toEqual(['acme', 'acme-2', 'acme-3', 'acme-10']);
  });

  it('shortens a long base so that the slug stays within 64 characters and valid', () => {
    // Prepare
    const base = `${'a'.repeat(61)}-bc`;

    // Act
    const slugs = [2, 10, 100, 999_999].map((n) => numberedSlug(base, n));

    // Assess
    expect(slugs[0]).toBe(`${'a'.repeat(61)}-2`);
    for (const slug of slugs) {
      expect(slug.length).toBeLessThanOrEqual(PRODUCT_SLUG_MAX);
      expect(slug).toMatch(PRODUCT_SLUG_PATTERN);
      expect(slug.startsWith(numberedSlugPrefix(base))).toBe(true);
    }
  });
});

describe('firstFreeSlug', () => {
  it('takes the first candidate nobody has', () => {
    expect(firstFreeSlug('acme', new Set())).toBe('acme');
    expect(firstFreeSlug('acme', new Set(['acme', 'acme-2', 'acme-4']))).toBe('acme-3');
  });
});
