/**
 * OpenAPI 3.0 lets `nullable` add null only to the `type` beside it: a schema that says `nullable` without a
 * `type` means nothing, and linters and client generators reject or misread it. The zod converter writes
 * exactly that for values that may be anything (`z.unknown()` → `{ nullable: true }`), for nullable
 * references (`allOf: [ref, { nullable: true }]`) and for nullable unions (`{ nullable: true }` as a
 * member). This rewrites those into forms that say the same thing with a `type` beside each `nullable`.
 */

type Schema = Record<string, unknown>;

const COMBINATORS = ['anyOf', 'oneOf', 'allOf'] as const;

/** Rewrites the document in place and returns it. */
export function typeEveryNullable<T extends object>(document: T): T {
  const components = (document as { components?: { schemas?: Record<string, Schema> } }).components?.schemas ?? {};
  const typeOf = (ref: unknown): string | undefined => {
    const name = typeof ref === 'string' ? ref.replace('#/components/schemas/', '') : undefined;
    const type = name ? components[name]?.type : undefined;
    return typeof type === 'string' ? type : undefined;
  };
  visit(document, (schema) => fix(schema, typeOf));
  return document;
}

const isBareNullable = (value: unknown): boolean =>
  isObject(value) && value.nullable === true && Object.keys(value).length === 1;

function fix(schema: Schema, typeOf: (ref: unknown) => string | undefined): void {
  // A nullable reference: the referenced schema's own type beside `nullable`, the reference under allOf.
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 2 && isBareNullable(allOf[1]) && isObject(allOf[0])) {
    const type = typeOf(allOf[0].$ref);
    if (type) Object.assign(schema, { type, nullable: true, allOf: [allOf[0]] });
    return;
  }
  // A nullable union: every member that can say so admits null itself.
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key];
    if (!Array.isArray(members) || !members.some(isBareNullable)) continue;
    schema[key] = members.filter((member) => !isBareNullable(member)).map((member) => nullableMember(member, typeOf));
  }
  // Any value at all, null included: the empty schema already admits null.
  if (schema.nullable === true && schema.type === undefined && !COMBINATORS.some((key) => key in schema)) {
    if (!('$ref' in schema) && !('enum' in schema)) delete schema.nullable;
  }
}

function nullableMember(member: unknown, typeOf: (ref: unknown) => string | undefined): unknown {
  if (!isObject(member)) return member;
  if (typeof member.type === 'string') return { ...member, nullable: true };
  const type = typeOf(member.$ref);
  return type ? { type, nullable: true, allOf: [member] } : member;
}

function visit(value: unknown, each: (schema: Schema) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visit(item, each);
    return;
  }
  if (!isObject(value)) return;
  each(value);
  for (const child of Object.values(value)) visit(child, each);
}

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null;
