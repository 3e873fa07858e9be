/**
 * The variable references a stage's config may hold in its string values, at any depth of objects and
 * arrays. Every `{{` begins a reference, closed by the next `}}`; spaces inside the braces are allowed.
 *
 * | form | meaning |
 * |---|---|
 * | `{{input.<field>}}` | the execution's input `<field>` (the execute request's `inputs`) |
 * | `{{<stage>.<field>}}` | output `<field>` of `<stage>`, which must be an ancestor of the stage (via depends_on) |
 * | `{{execution_id}}`, `{{pipeline_id}}`, … | a built-in value of the run (`BUILT_IN_VARIABLES`) |
 *
 * A field is a name of letters, digits and `_` (not starting with a digit), and may go deeper with dots:
 * `{{plan.summary}}`, `{{input.repo.url}}`.
 */

/** The built-in variables, each filled in by the execution. */
export const BUILT_IN_VARIABLES = [
  'execution_id',
  'pipeline_id',
  'pipeline_name',
  'stage_name',
  'now',
  'task_id',
] as const;
export type BuiltInVariable = (typeof BUILT_IN_VARIABLES)[number];

const BUILT_INS: ReadonlySet<string> = new Set(BUILT_IN_VARIABLES);

export type VariableReference =
  | { kind: 'built-in'; name: BuiltInVariable }
  | { kind: 'input'; field: string }
  | { kind: 'stage'; stage: string; field: string };

/** A reference as found in a config: where (`path`), as written (`text`), and what it is or why it is not. */
export interface FoundReference {
  path: string;
  text: string;
  reference?: VariableReference;
  problem?: string;
}

const FIELD = '[A-Za-z_][A-Za-z0-9_]*';
const QUALIFIED = new RegExp(`^([a-z][a-z0-9_-]{0,63})\\.(${FIELD}(?:\\.${FIELD})*)$`);
const REFERENCE = /\{\{([\s\S]*?)\}\}/g;

const BUILT_IN_LIST = BUILT_IN_VARIABLES.map((name) => `{{${name}}}`).join(', ');
const GRAMMAR = `one of {{input.<field>}}, {{<stage>.<field>}} or a built-in (${BUILT_IN_LIST})`;

/**
 * What the text between `{{` and `}}` refers to, or undefined when it is no reference of the grammar.
 *
 * @example parseReference(' plan.summary ') // { kind: 'stage', stage: 'plan', field: 'summary' }
 */
export function parseReference(inner: string): VariableReference | undefined {
  const expression = inner.trim();
  if (BUILT_INS.has(expression)) return { kind: 'built-in', name: expression as BuiltInVariable };
  const qualified = QUALIFIED.exec(expression);
  if (!qualified) return undefined;
  const [, head = '', field = ''] = qualified;
  return head === 'input' ? { kind: 'input', field } : { kind: 'stage', stage: head, field };
}

/** The references of one string, with a problem for each malformed one and for a `{{` never closed. */
export function referencesInText(text: string, path: string): FoundReference[] {
  const found: FoundReference[] = [];
  for (const match of text.matchAll(REFERENCE)) {
    const reference = parseReference(match[1] ?? '');
    found.push(
      reference
        ? { path, text: match[0], reference }
        : { path, text: match[0], problem: `${match[0]} is not a variable reference: use ${GRAMMAR}` },
    );
  }
  if (text.replace(REFERENCE, '').includes('{{')) {
    found.push({
      path,
      text: '{{',
      problem: `has a {{ without its closing }}: every {{ begins a reference, ${GRAMMAR}`,
    });
  }
  return found;
}

/**
 * Every reference in the string values of `value`, recursively through objects and arrays, each with
 * its path below `path` (`config.steps[0].prompt`).
 */
export function referencesIn(value: unknown, path: string): FoundReference[] {
  if (typeof value === 'string') return referencesInText(value, path);
  if (Array.isArray(value)) return value.flatMap((entry, index) => referencesIn(entry, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, entry]) => referencesIn(entry, `${path}.${key}`));
  }
  return [];
}

/** The top-level input fields the configs reference (`{{input.repo.url}}` needs `repo`), sorted. */
export function referencedInputs(stages: ReadonlyArray<{ config: Record<string, unknown> }>): string[] {
  const fields = new Set<string>();
  for (const stage of stages) {
    for (const found of referencesIn(stage.config, 'config')) {
      if (found.reference?.kind === 'input') fields.add(found.reference.field.split('.')[0] as string);
    }
  }
  return [...fields].sort();
}
