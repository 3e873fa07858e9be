import type { Schema, SchemaJudge } from '#tests/support/openapi-schema';

/**
 * The raw material of the fuzzing suite: hostile values for bodies, query strings and path segments, a
 * probably-valid body built from a schema of the document (so that one fault is the only one), and the
 * places in a body where the document forbids something.
 */

export const KB100 = 'x'.repeat(100_000);
const NUL = 'a\u0000b';
const SURROGATES = '\ud800 and \udfff';

/** JSON values that break one schema or another: wrong types, odd strings, numbers out of any range. */
const BODY_VALUES: unknown[] = [
  '',
  ' ',
  'x',
  NUL,
  SURROGATES,
  '__proto__',
  '../../etc/passwd',
  '%00',
  '1',
  'true',
  'null',
  KB100,
  0,
  -1,
  1.5,
  -0.5,
  1e21,
  -1e21,
  1.7976931348623157e308,
  -1.7976931348623157e308,
  2 ** 53 + 2,
  true,
  false,
  null,
  [],
  [null],
  ['x'],
  [1, 2, 3],
  {},
  { unexpected: true },
  JSON.parse('{"__proto__":{"polluted":true}}'),
];

/** Values aimed at one schema's own limits: one past each bound, near misses of an enum. */
function valuesAtLimits(schema: Schema): unknown[] {
  const values: unknown[] = [];
  if (schema.maxLength !== undefined) {
    values.push('x'.repeat(schema.maxLength + 1), `${NUL}${SURROGATES}`.padEnd(schema.maxLength + 1, 'y'));
  }
  if (schema.minLength !== undefined && schema.minLength > 0) values.push('x'.repeat(schema.minLength - 1));
  for (const bound of [schema.minimum, schema.maximum]) {
    if (bound !== undefined) values.push(bound - 1, bound + 1, bound - 0.5, bound + 0.5, bound * 1000, bound);
  }
  for (const allowed of schema.enum ?? []) {
    if (typeof allowed === 'string') values.push(allowed.toUpperCase(), ` ${allowed}`, `${allowed},nonsense`);
  }
  if (schema.maxItems !== undefined) values.push(Array.from({ length: schema.maxItems + 1 }, () => 'x'));
  return values;
}

/** The hostile values the document forbids where `schema` stands (empty when it allows anything). */
export function forbiddenValues(judge: SchemaJudge, schema: Schema | undefined): unknown[] {
  const resolved = judge.resolve(schema);
  if (!resolved) return [];
  return [...valuesAtLimits(resolved), ...BODY_VALUES].filter((value) => judge.forbids(resolved, value));
}

/** Query values, as text, that break one parameter or another. */
const QUERY_TEXTS = [
  '',
  ' ',
  'abc',
  '-1',
  '0',
  '1.5',
  '1e400',
  'NaN',
  '99999999999999999999',
  'x'.repeat(5_000),
  NUL,
  SURROGATES,
  '__proto__',
  'true,false',
  ',,',
  'nonsense',
  '%',
  '<script>',
];

export function forbiddenTexts(judge: SchemaJudge, schema: Schema | undefined): string[] {
  const resolved = judge.resolve(schema);
  if (!resolved) return [];
  const atLimits = valuesAtLimits(resolved).map(String);
  return [...atLimits, ...QUERY_TEXTS].filter((text) => judge.forbidsText(resolved, text));
}

/**
 * Path segments, as a client sends them (percent-encoded), that name no record of anyone: prototype
 * names, traversal, NUL, malformed and overlong encodings, ids out of range and very long ones.
 */
export const PATH_SEGMENTS = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e%2f%2e%2e%2f',
  '%00',
  'a%00b',
  '%',
  '%E0%A4%A',
  '%ZZ',
  '%ED%A0%80',
  '%C0%AE%C0%AE',
  '-1',
  '0',
  '1.5',
  '1e3',
  '0x1F',
  '99999999999',
  '999999999999999999999999999',
  'x'.repeat(5_000),
  '%C3%BC',
  '%F0%9F%98%80',
  'null',
  'undefined',
  'NaN',
  "'%20OR%20'1'%3D'1",
  '%3Cscript%3E',
  '..',
  '%20',
  '*',
  '$where',
];

/** The segment a router sees after percent-decoding, or undefined when it cannot be decoded (a 400). */
export function decodeSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** A percent-encoded segment of any text (lone surrogates, which cannot be encoded, become one encoded). */
export function encodeSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

/**
 * A value the schema probably accepts: its example, or each field's simplest value within its bounds, so
 * that a request with one field turned wrong has that one fault. Patterns are met by trying a few shapes.
 */
export function exampleOf(judge: SchemaJudge, schema: Schema | undefined, depth = 0): unknown {
  const resolved = judge.resolve(schema);
  if (!resolved || depth > 5) return undefined;
  // The document's own example says best what a valid value looks like (and which payloads are read).
  if (resolved.example !== undefined && !judge.forbids(resolved, resolved.example)) return resolved.example;
  if (resolved.enum) return resolved.enum.find((value) => value !== null);
  const member = resolved.anyOf?.[0] ?? resolved.oneOf?.[0] ?? resolved.allOf?.[0];
  const type = resolved.type ?? (resolved.properties ? 'object' : undefined);
  switch (type) {
    case 'object':
      return Object.fromEntries(
        Object.entries(resolved.properties ?? {})
          .map(([name, field]) => [name, exampleOf(judge, field, depth + 1)])
          .filter(([, value]) => value !== undefined),
      );
    case 'array':
      return resolved.minItems ? [exampleOf(judge, resolved.items, depth + 1)] : [];
    case 'string': {
      const shapes = ['fuzz', 'fuzz-1', 'a', 'x1', 'A', '1', 'fuzz@example.com', 'universal', '2030-01-01T00:00:00Z'];
      const padded = 'fuzz'.padEnd(resolved.minLength ?? 0, 'z').slice(0, resolved.maxLength ?? 64);
      return [padded, ...shapes].find((text) => !judge.forbids(resolved, text)) ?? padded;
    }
    case 'integer':
    case 'number': {
      const low = resolved.minimum === undefined ? 1 : resolved.minimum + (resolved.exclusiveMinimum ? 1 : 0);
      return resolved.maximum === undefined ? Math.max(low, 1) : Math.min(Math.max(low, 1), resolved.maximum);
    }
    case 'boolean':
      return true;
    default:
      return member ? exampleOf(judge, member, depth) : undefined;
  }
}

/** Where a body may hold a value: `['stages', 0, 'name']`. */
export type Location = Array<string | number>;

export interface FieldSite {
  location: Location;
  schema: Schema;
  /** The values the document forbids here. */
  forbidden: unknown[];
  /** Fields the document requires of the object at this location. */
  required: string[];
}

/**
 * Every place of a body schema reached through plain properties and array items (not through the
 * members of a union, where which rule applies is not known), a few levels deep.
 */
export function fieldSites(judge: SchemaJudge, schema: Schema | undefined, location: Location = []): FieldSite[] {
  const resolved = judge.resolve(schema);
  if (!resolved || location.length > 3) return [];
  const sites: FieldSite[] = [
    { location, schema: resolved, forbidden: forbiddenValues(judge, resolved), required: resolved.required ?? [] },
  ];
  for (const [name, field] of Object.entries(resolved.properties ?? {})) {
    sites.push(...fieldSites(judge, field, [...location, name]));
  }
  if (resolved.type === 'array' && resolved.items) sites.push(...fieldSites(judge, resolved.items, [...location, 0]));
  return sites;
}

/** Sets a value deep in a JSON value, making the objects and arrays on the way (a fault never needs more). */
export function setAt(root: Record<string, unknown>, location: Location, value: unknown): void {
  let current: Record<string | number, unknown> = root;
  for (const [index, key] of location.entries()) {
    if (index === location.length - 1) {
      current[key] = value;
      return;
    }
    const next = current[key];
    const wantsArray = typeof location[index + 1] === 'number';
    if (next === null || typeof next !== 'object' || Array.isArray(next) !== wantsArray) {
      current[key] = wantsArray ? [] : {};
    }
    current = current[key] as Record<string | number, unknown>;
  }
}

export function removeAt(root: Record<string, unknown>, location: Location, name: string): void {
  if (location.length === 0) {
    delete root[name];
    return;
  }
  setAt(root, [...location, name], undefined);
  let current: unknown = root;
  for (const key of location) current = (current as Record<string | number, unknown>)[key];
  delete (current as Record<string, unknown>)[name];
}

export const locationName = (prefix: string, location: Location): string =>
  location.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : `${name}.${key}`), prefix);

/** A short, readable picture of a value for a failure message: long strings are cut and measured. */
export function preview(value: unknown, limit = 80): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > limit ? `${text.slice(0, limit - 20)}… (${text.length} chars)` : text;
}
