/**
 * OpenAPI 3.0 lets `nullable` add null only to the `type` beside it: a schema that says `nullable` without a
 * `type` means nothing, and linters and client generators reject or misread it. The zod converter writes
 * exactly that for values that may be anything (`z.unknown()` → `{ nullable: true }`), for nullable
 * references (`allOf: [ref, { nullable: true }]`) and for nullable unions (`{ nullable: true }` as a
 * member). This rewrites those into forms that say the same thing with a `type` beside each `nullable`.
 * Null itself is a member of its own (`{ type, nullable: true, enum: [null] }`): since 3.0.3, `nullable`
 * beside an `allOf` of a reference does not make the referenced (non-nullable) schema admit null, so
 * validators rightly refuse null there.
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
  // A nullable reference: the reference, or null.
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 2 && isBareNullable(allOf[1]) && isObject(allOf[0])) {
    const type = typeOf(allOf[0].$ref);
    if (type) {
      delete schema.allOf;
      schema.anyOf = [allOf[0], onlyNull(type)];
    }
    return;
  }
  // A nullable union: members that can say so admit null themselves; references get null beside them.
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key];
    if (!Array.isArray(members) || !members.some(isBareNullable)) continue;
    const rest = members.filter((member) => !isBareNullable(member));
    const typed = rest.map((member) => (isObject(member) && typeof member.type === 'string' ? member : undefined));
    const referenced = rest.map((member) => (isObject(member) ? typeOf(member.$ref) : undefined)).find(Boolean);
    schema[key] = [
      ...rest.map((member, index) => (typed[index] ? { ...typed[index], nullable: true } : member)),
      ...(referenced && typed.every((member) => !member) ? [onlyNull(referenced)] : []),
    ];
  }
  // Any value at all, null included: the empty schema already admits null.
  if (schema.nullable === true && schema.type === undefined && !COMBINATORS.some((key) => key in schema)) {
    if (!('$ref' in schema) && !('enum' in schema)) delete schema.nullable;
  }
}

/** Null and nothing else, with the type OpenAPI 3.0 wants beside `nullable`. */
const onlyNull = (type: string): Schema => ({ type, nullable: true, enum: [null] });

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
