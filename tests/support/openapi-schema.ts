/**
 * Reads the service's OpenAPI document as a client would: its operations, their parameters and request
 * bodies, and a judge of JSON values against a schema of it. The judge answers one question only, "does
 * the document forbid this value?", and answers yes only when a keyword it understands is broken
 * (`type`, `nullable`, `enum`, lengths, `pattern`, the outline of a `format`, bounds, `required`,
 * `additionalProperties`, items, `allOf`/`anyOf`/`oneOf`); keywords it does not know (`not`, say) never
 * make it say yes. The fuzzing suite sends only values it says yes to, so every request it sends is one
 * the document forbids.
 */

export interface Schema {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  format?: string;
  example?: unknown;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

export interface Operation {
  operationId?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface DocumentOperation {
  method: string;
  path: string;
  operation: Operation;
}

const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete']);

/** Every operation of the document, as `GET /tasks/{id}` and its operation object. */
export function operationsOf(document: OpenApiDocument): DocumentOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  );
}

/** The JSON request body's schema, if the operation takes one. */
export const bodySchemaOf = (operation: Operation): Schema | undefined =>
  operation.requestBody?.content?.['application/json']?.schema;

export const parametersOf = (operation: Operation, where: Parameter['in']): Parameter[] =>
  (operation.parameters ?? []).filter((parameter) => parameter.in === where);

export class SchemaJudge {
  private readonly patterns = new Map<string, RegExp[]>();

  constructor(private readonly document: OpenApiDocument) {}

  /** The schema a `$ref` names, or the schema itself. */
  resolve(schema: Schema | undefined): Schema | undefined {
    let current = schema;
    for (let hops = 0; current?.$ref && hops < 20; hops += 1) {
      const name = current.$ref.replace('#/components/schemas/', '');
      const target = this.document.components?.schemas?.[name];
      // Keywords beside a $ref (OpenAPI 3.0 ignores them, but the nullable rewrite puts some there).
      const { $ref: _, ...beside } = current;
      current = target ? { ...target, ...beside } : undefined;
    }
    return current;
  }

  /** Whether the document forbids `value` where `schema` stands. */
  forbids(schema: Schema | undefined, value: unknown): boolean {
    const resolved = this.resolve(schema);
    if (!resolved) return false;
    // `nullable` admits null whatever the members say (the document's nullable references are allOf).
    if (value === null && resolved.nullable === true) return false;
    if ((resolved.allOf ?? []).some((member) => this.forbids(member, value))) return true;
    for (const members of [resolved.anyOf, resolved.oneOf]) {
      if (members && members.length > 0 && members.every((member) => this.forbids(member, value))) return true;
    }
    if (value === null) return resolved.nullable !== true && (resolved.type !== undefined || !!resolved.enum);
    if (resolved.type !== undefined && !hasType(resolved.type, value)) return true;
    if (resolved.enum && !resolved.enum.some((allowed) => sameJson(allowed, value))) return true;
    if (typeof value === 'string') return this.forbidsString(resolved, value);
    if (typeof value === 'number') return forbidsNumber(resolved, value);
    if (Array.isArray(value)) return this.forbidsArray(resolved, value);
    if (typeof value === 'object') return this.forbidsObject(resolved, value as Record<string, unknown>);
    return false;
  }

  /**
   * Whether the document forbids a query or path value, which arrives as text: for a numeric schema, the
   * text must be forbidden both read strictly (an integer literal) and read leniently (`Number(text)`),
   * so that neither reading of the document would let it through.
   */
  forbidsText(schema: Schema | undefined, text: string): boolean {
    const resolved = this.resolve(schema);
    if (!resolved) return false;
    if (resolved.type === 'integer' || resolved.type === 'number') {
      const literal = resolved.type === 'integer' ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/;
      const strict = literal.test(text) ? this.forbids(resolved, Number(text)) : true;
      return strict && this.forbids(resolved, Number(text));
    }
    if (resolved.type === 'boolean') return text !== 'true' && text !== 'false';
    return this.forbids(resolved, text);
  }

  private forbidsString(schema: Schema, value: string): boolean {
    // Lengths in code points (JSON Schema) and in UTF-16 units (JavaScript) differ for astral characters:
    // a value is too long or too short only when it is so counted either way.
    const codePoints = [...value].length;
    if (schema.maxLength !== undefined && codePoints > schema.maxLength) return true;
    if (schema.minLength !== undefined && value.length < schema.minLength) return true;
    const outline = schema.format !== undefined ? FORMAT_OUTLINES[schema.format] : undefined;
    if (outline && !outline.test(value)) return true;
    if (schema.pattern !== undefined) {
      const readings = this.patternReadings(schema.pattern);
      if (readings.length > 0 && readings.every((pattern) => !pattern.test(value))) return true;
    }
    return false;
  }

  /**
   * The pattern read with and without Unicode mode, where it compiles: forbidden only if neither matches.
   * A pattern with a property escape (`\p{Cc}`) only means something in Unicode mode, and is read so.
   */
  private patternReadings(pattern: string): RegExp[] {
    let readings = this.patterns.get(pattern);
    if (!readings) {
      readings = [];
      for (const flags of /\\[pP]\{/.test(pattern) ? ['u'] : ['u', '']) {
        try {
          readings.push(new RegExp(pattern, flags));
        } catch {
          // Not a pattern in this reading.
        }
      }
      this.patterns.set(pattern, readings);
    }
    return readings;
  }

  private forbidsArray(schema: Schema, value: unknown[]): boolean {
    if (schema.minItems !== undefined && value.length < schema.minItems) return true;
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return true;
    return schema.items !== undefined && value.some((item) => this.forbids(schema.items, item));
  }

  private forbidsObject(schema: Schema, value: Record<string, unknown>): boolean {
    const properties = schema.properties ?? {};
    if ((schema.required ?? []).some((name) => !Object.hasOwn(value, name))) return true;
    for (const [name, field] of Object.entries(value)) {
      if (Object.hasOwn(properties, name)) {
        if (this.forbids(properties[name], field)) return true;
      } else if (schema.additionalProperties === false) {
        return true;
      } else if (typeof schema.additionalProperties === 'object') {
        if (this.forbids(schema.additionalProperties, field)) return true;
      }
    }
    return false;
  }
}

/**
 * Loose outlines of the formats the document names: a value that misses one is surely not of its format,
 * while one that fits may still not be (so fitting never makes the judge say "forbidden").
 */
const FORMAT_OUTLINES: Record<string, RegExp> = {
  'date-time': /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:/,
  email: /^[^@\s]+@[^@\s]+$/,
};

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

function forbidsNumber(schema: Schema, value: number): boolean {
  if (schema.minimum !== undefined) {
    if (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum) return true;
  }
  if (schema.maximum !== undefined) {
    if (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum) return true;
  }
  return false;
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
