import * as z from 'zod';

/**
 * Shapes shared by routes: the paging query, value lists, free-form objects. (The envelopes' schemas are
 * the OpenAPI document's alone: lib/openapi/envelopes.ts.)
 */

export const MAX_PAGE_SIZE = 200;
export const DEFAULT_PAGE_SIZE = 50;

const nonNegativeInteger = (name: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${name} must be a non-negative integer`)
    .transform(Number);

/**
 * `limit` (default 50, values above 200 are clamped to 200) and `offset` (default 0). Anything that is not a
 * non-negative integer is a 400.
 */
export const pagingQuery = z.object({
  limit: nonNegativeInteger('limit')
    .transform((limit) => Math.min(limit, MAX_PAGE_SIZE))
    .optional()
    .transform((limit) => limit ?? DEFAULT_PAGE_SIZE)
    .meta({
      description: `Page size; default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE} (larger values are clamped).`,
    }),
  offset: nonNegativeInteger('offset')
    .optional()
    .transform((offset) => offset ?? 0)
    .meta({ description: 'Items to skip; default 0.' }),
});

export type Paging = z.output<typeof pagingQuery>;

/**
 * A query parameter naming several values of a set, comma-separated (`status=todo,in_progress`). Parts
 * are trimmed; an empty value (`status=`) filters nothing and gives `undefined`; a value outside the set
 * is a 400 naming it and the values allowed.
 *
 * @example
 * query: pagingQuery.extend({ status: valueList(TASK_STATUS_INPUTS, 'status').optional() })
 */
export function valueList<const T extends string>(allowed: readonly T[], noun = 'value') {
  return z
    .string()
    .max(200)
    .transform((value, ctx): T[] | undefined => {
      const values = value
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean);
      const unknown = values.filter((part) => !(allowed as readonly string[]).includes(part));
      if (unknown.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown ${noun} ${unknown.join(', ')}; use ${allowed.join(', ')}`,
        });
        return z.NEVER;
      }
      return values.length > 0 ? (values as T[]) : undefined;
    });
}

/** How deep any request body may nest: well below DynamoDB's 32 levels for a stored attribute. */
export const MAX_BODY_DEPTH = 24;

/**
 * Nesting depth of JSON text, read before it is parsed: brackets outside strings, in one pass. A body
 * nested thousands deep is refused before any parser or validator recurses into it.
 */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 92)
        index += 1; // a backslash escapes the next character
      else if (char === 34) inString = false;
    } else if (char === 34) {
      inString = true;
    } else if (char === 123 || char === 91) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (char === 125 || char === 93) {
      depth -= 1;
    }
  }
  return deepest;
}

/** Nesting depth of a parsed JSON value, counted without recursion (a 3,000-deep body must not overflow). */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (current === null || typeof current !== 'object') continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * The values a request body may hold: those the table stores and reads back as sent. The AWS SDK refuses
 * to write a number beyond ±(2^53 − 1) (it would lose digits, and read back it would be a BigInt),
 * DynamoDB refuses a magnitude below 1e-130 other than 0, and a literal beyond the range of a double
 * (`1e400`) parses as Infinity, which nothing stores. Typed fields have narrower bounds of their own; the
 * free-form ones (metadata, a job's payload, an agent's config) took any number and failed the write.
 * A string (or key) with an unpaired surrogate (`"\ud800"`) has no UTF-8 form: on its way to the table it
 * would silently become U+FFFD.
 */
export const MAX_BODY_NUMBER = Number.MAX_SAFE_INTEGER;
export const MIN_BODY_FRACTION = 1e-130;
const NUMBER_RANGE = `must be 0 or between ${MIN_BODY_FRACTION} and ${MAX_BODY_NUMBER} in magnitude`;
const WELL_FORMED = 'must not hold an unpaired surrogate (\\ud800–\\udfff alone)';
// With the `u` flag a proper pair is one code point, so only a lone surrogate is a `Cs` character.
const LONE_SURROGATE = /\p{Cs}/u;

/** Where in a parsed body (`body.meta.x`, `body.items[2]`) a value cannot be stored as sent, and why. */
export function unstorableValueIn(value: unknown): { path: string; message: string } | undefined {
  const stack: Array<[unknown, string]> = [[value, 'body']];
  while (stack.length > 0) {
    const [current, path] = stack.pop() as [unknown, string];
    if (typeof current === 'number') {
      const magnitude = Math.abs(current);
      // NaN and Infinity fail the first comparison.
      if (!(magnitude <= MAX_BODY_NUMBER) || (magnitude > 0 && magnitude < MIN_BODY_FRACTION)) {
        return { path, message: NUMBER_RANGE };
      }
    } else if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) return { path, message: WELL_FORMED };
    } else if (Array.isArray(current)) {
      for (const [index, child] of current.entries()) stack.push([child, `${path}[${index}]`]);
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) return { path, message: `has a key that ${WELL_FORMED}` };
        stack.push([child, `${path}.${key}`]);
      }
    }
  }
  return undefined;
}

/**
 * A free-form JSON object the service stores as given (metadata, configuration, payloads), with a
 * documented limit on its nesting and its size, so that a stored record always fits and reads back.
 *
 * @example
 * metadata: freeFormObject({ maxDepth: 8, maxBytes: 16_384 }).optional()
 */
export function freeFormObject(limits: { maxDepth: number; maxBytes: number }) {
  return z
    .record(z.string(), z.unknown())
    .superRefine((value, issues) => {
      if (jsonDepth(value) > limits.maxDepth) {
        issues.addIssue({ code: 'custom', message: `nests deeper than ${limits.maxDepth} levels` });
        return;
      }
      if (Buffer.byteLength(JSON.stringify(value)) > limits.maxBytes) {
        issues.addIssue({ code: 'custom', message: `is larger than ${limits.maxBytes} bytes as JSON` });
      }
    })
    .meta({
      description: `Any JSON object, at most ${limits.maxDepth} levels deep and ${limits.maxBytes} bytes as JSON.`,
    });
}
