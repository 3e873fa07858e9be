import type { RouteDef } from '#lib/http/route';

/**
 * The mechanics of the tenant isolation suite (tests/integration/tenant-isolation.test.ts): filling a
 * route's path parameters with one organization's values, reading a route's query fields, and finding an
 * organization's values in an answer once the caller's own are taken out.
 */

/** A value for a path parameter, and which organization it is of. */
export interface Ref {
  value: string;
  of: 'A' | 'B';
}

export const ofA = (value: string | number): Ref => ({ value: String(value), of: 'A' });

export interface Variant {
  route: RouteDef;
  /** The value of each path parameter, in order. */
  refs: Ref[];
  /** Under /api, each parameter filled in (URL-encoded). */
  path: string;
  /** The values of A in the path. */
  sent: string[];
  /** The same path with each of A's values changed into one nobody has (see `twin`). */
  unknownPath: string;
}

export const routeName = (route: Pick<RouteDef, 'method' | 'path'>) => `${route.method} ${route.path}`;

/**
 * A value of the same shape that nobody has: a number plus 1,000; a string with its last digit moved on by
 * one (`job_…7uoR` → `job_…8uoR`, `alpha2x-product` → `alpha3x-product`), or without digits its last
 * letter (`job_…ONvTzS` → `job_…ONvTzT`), which keeps any pattern and length it had.
 */
export function twin(value: string): string {
  if (/^\d+$/.test(value)) return String(Number(value) + 1000);
  const digit = /\d(?=\D*$)/.exec(value);
  if (digit) return `${value.slice(0, digit.index)}${(Number(digit[0]) + 1) % 10}${value.slice(digit.index + 1)}`;
  const letter = /[a-zA-Z](?=[^a-zA-Z]*$)/.exec(value);
  if (!letter) return `${value}x`;
  const next = letter[0] === 'z' ? 'a' : letter[0] === 'Z' ? 'A' : String.fromCharCode(letter[0].charCodeAt(0) + 1);
  return `${value.slice(0, letter.index)}${next}${value.slice(letter.index + 1)}`;
}

const fill = (route: RouteDef, refs: Ref[], value: (ref: Ref) => string) => {
  const values = refs.map((ref) => encodeURIComponent(value(ref)));
  return `/api${route.path.replace(/\{\w+\}/g, () => values.shift() as string)}`;
};

/**
 * Every path of `route` with its parameters filled by `fillers`, which map the path up to and including a
 * parameter (`/agent-pipelines/{id}/executions/{executionId}`) to its values: each combination that holds
 * at least one of A's. A parameter with no filler is named in `unfilled` (and no variant is made).
 */
export function variantsOf(
  route: RouteDef,
  fillers: Record<string, () => Ref[]>,
): { variants: Variant[]; unfilled: string[] } {
  const options: Ref[][] = [];
  const unfilled: string[] = [];
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    const prefix = route.path.slice(0, route.path.indexOf(`{${name}}`) + `{${name}}`.length);
    const filler = fillers[prefix];
    if (filler) options.push(filler());
    else unfilled.push(`{${name}} in ${prefix}`);
  }
  if (unfilled.length > 0) return { variants: [], unfilled };
  let combinations: Ref[][] = [[]];
  for (const choices of options) {
    combinations = combinations.flatMap((chosen) => choices.map((choice) => [...chosen, choice]));
  }
  const variants = combinations
    .filter((refs) => refs.some((ref) => ref.of === 'A'))
    .map((refs) => ({
      route,
      refs,
      path: fill(route, refs, (ref) => ref.value),
      sent: refs.filter((ref) => ref.of === 'A').map((ref) => ref.value),
      unknownPath: fill(route, refs, (ref) => (ref.of === 'A' ? twin(ref.value) : ref.value)),
    }));
  return { variants, unfilled };
}

/** The names of a route's query fields. */
export function queryFields(route: RouteDef): string[] {
  // biome-ignore lint/suspicious/noExplicitAny: walks zod's internal definition of the query schema
  let def: any = (route.query as any)?.def;
  while (def && def.type !== 'object') def = def.in?.def ?? def.innerType?.def;
  return def ? Object.keys(def.shape) : [];
}

/**
 * Which of `identifying` an answer shows, once the values the caller sent are taken out: JSON strings that
 * are exactly one of them (an echoed filter), and, inside longer text (an error message, a feed's title),
 * those that are more than `marker` alone, so that a record whose name merely begins with the marker is
 * still found. Numbers are never taken out: they identify nothing.
 */
export function leaksIn(text: string, identifying: string[], marker: string, sent: string[] = []): string[] {
  const echoes = new Set(sent);
  let rest = text;
  try {
    rest = JSON.stringify(JSON.parse(text), (_, value) =>
      typeof value === 'string' && echoes.has(value) ? '' : value,
    );
  } catch {
    // Not JSON (a feed, a page): only the substrings below come out.
  }
  const inText = sent.filter((value) => value !== marker && !/^\d+$/.test(value));
  for (const value of inText.sort((x, y) => y.length - x.length)) {
    for (const form of new Set([
      value,
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice(2),
    ])) {
      rest = rest.split(form).join('');
    }
  }
  return identifying.filter((value) => rest.includes(value));
}

/** Every string a request body holds, nested ones and the parts of `agent:<name>` included: what B sent. */
export function stringsIn(body: unknown): string[] {
  if (typeof body === 'string') return [body, ...body.split(':')];
  if (body === null || typeof body !== 'object') return [];
  return Object.values(body).flatMap(stringsIn);
}

/** The `error` of an answer, if it is the error envelope. */
export function errorOf(body: string): { code?: string; message?: string; details?: unknown } | undefined {
  try {
    return (JSON.parse(body) as { error?: { code?: string; message?: string } }).error;
  } catch {
    return undefined;
  }
}
