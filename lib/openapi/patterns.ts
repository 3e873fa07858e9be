/**
 * The zod converter writes a regular expression's `pattern` as the expression's text less its first and
 * last slash, so an expression with flags keeps them: `/^[^\p{Cc}]+$/u` becomes `^[^\p{Cc}]+$/u`, a
 * pattern that asks for "/u" after the end of the text and so matches nothing. A client validating against
 * the document would refuse every value, and a client generator would copy the broken expression. This
 * writes each such pattern as its source. The Unicode flag is the only one the routes use and needs no
 * saying: JSON Schema reads patterns with Unicode semantics (`\p{…}` only means something there). Any
 * other flag (`i`, say) changes what matches and cannot be said in a pattern, so it stops the build.
 */

/** A `/flags` suffix whose slash is not escaped: a regular expression's source escapes every slash it holds. */
const FLAGS = /(?<=(?:^|[^\\])(?:\\\\)*)\/([a-z]+)$/;

/** Rewrites the document's patterns in place and returns it. */
export function patternsWithoutFlags<T extends object>(document: T): T {
  visit(document);
  return document;
}

function visit(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) visit(item);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const schema = value as Record<string, unknown>;
  if (typeof schema.pattern === 'string') schema.pattern = withoutFlags(schema.pattern);
  for (const child of Object.values(schema)) visit(child);
}

export function withoutFlags(pattern: string): string {
  const match = FLAGS.exec(pattern);
  if (!match) return pattern;
  const flags = match[1] as string;
  if (flags !== 'u' && flags !== 'v') {
    throw new Error(`The pattern ${pattern} has flags (${flags}) that an OpenAPI pattern cannot say`);
  }
  return pattern.slice(0, match.index);
}
