import { ConflictError, isConditionFailed } from '#lib/errors';

/**
 * Product slugs: the path key of a product, unique in its organization and fixed at creation.
 * A slug is lowercase letters and digits in runs joined by single hyphens, at most 64 characters.
 */
export const PRODUCT_SLUG_MAX = 64;
export const PRODUCT_SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const trimHyphens = (text: string): string => text.replace(/^-+|-+$/g, '');

/**
 * The slug a name gives (design.md): lowercase, every run of characters other than `a-z0-9` becomes
 * one `-`, no hyphen at either end, at most 64 characters. Letters outside `a-z` count as other
 * characters, so `Café Noir` gives `caf-noir`; a name without any `a-z0-9` gives `''` (the caller
 * must then send a slug).
 *
 * @example slugFromName('  Acme Robotics: Ops!  ') // 'acme-robotics-ops'
 */
export function slugFromName(name: string): string {
  const slug = trimHyphens(name.toLowerCase().replace(/[^a-z0-9]+/g, '-'));
  return trimHyphens(slug.slice(0, PRODUCT_SLUG_MAX));
}

/**
 * The `n`th candidate for a generated slug: `base` itself for 1, then `base-2`, `base-3`, … The base
 * is shortened where the suffix would pass 64 characters.
 *
 * @example numberedSlug('acme', 3) // 'acme-3'
 */
export function numberedSlug(base: string, n: number): string {
  if (n <= 1) return base;
  const suffix = `-${n}`;
  return `${trimHyphens(base.slice(0, PRODUCT_SLUG_MAX - suffix.length))}${suffix}`;
}

/**
 * A prefix that every numbered candidate of `base` starts with (up to `base-999999`), for the one
 * Query that finds the taken ones: the base shortened by the longest suffix, less a trimmed hyphen.
 */
export const numberedSlugPrefix = (base: string): string => base.slice(0, PRODUCT_SLUG_MAX - 8);

/**
 * The first candidate of `base` (`base`, `base-2`, …) not in `taken`.
 *
 * @example firstFreeSlug('acme', new Set(['acme', 'acme-2'])) // 'acme-3'
 */
export function firstFreeSlug(base: string, taken: ReadonlySet<string>): string {
  for (let n = 1; ; n += 1) {
    const candidate = numberedSlug(base, n);
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * Creates a record under a slug (products, discovery engines). A `given` slug is used as it is: a write
 * refused with `slug-taken` is answered by `taken()`. Without one, the first candidate of `base` that
 * `seen` (one Query of the slugs starting with a prefix) does not list nor `reserved` holds; when a
 * concurrent create wins that slug, the next free one, at most `attempts` times, then 409 `busy`: never
 * a 409 about a slug the caller did not send.
 */
export async function createUnderSlug<T>(input: {
  given?: string;
  base: string;
  reserved?: Iterable<string>;
  seen: (prefix: string) => Promise<Iterable<string>>;
  create: (slug: string) => Promise<T>;
  taken: () => Error;
  attempts: number;
  busy: string;
}): Promise<T> {
  if (input.given !== undefined) {
    try {
      return await input.create(input.given);
    } catch (error) {
      throw isConditionFailed(error, 'slug-taken') ? input.taken() : error;
    }
  }
  const lostRaces = new Set<string>(input.reserved);
  for (let attempt = 1; attempt <= input.attempts; attempt += 1) {
    const seen = await input.seen(numberedSlugPrefix(input.base));
    const slug = firstFreeSlug(input.base, new Set([...seen, ...lostRaces]));
    try {
      return await input.create(slug);
    } catch (error) {
      // Another create took this slug (or held the same items) between the Query and the write.
      if (!(error instanceof ConflictError)) throw error;
      if (isConditionFailed(error, 'slug-taken')) lostRaces.add(slug);
    }
  }
  throw new ConflictError(input.busy);
}
