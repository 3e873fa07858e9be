import { parseReference, type VariableReference } from '#lib/pipelines/pipeline-variables';

/**
 * Fills in the variable references of a stage's config at run time (the grammar:
 * lib/pipelines/pipeline-variables.ts), in every string value, at any depth of objects and arrays:
 *
 * - a string that is one reference and nothing else becomes the value itself, whatever its type
 *   (`"{{plan.steps}}"` gives the array);
 * - a reference inside other text is written into it: strings as they are, other values as JSON;
 * - a value that is absent (an output without that field, `{{task_id}}` without a `task_id` input)
 *   is the empty string.
 */

export interface VariableScope {
  inputs: Record<string, unknown>;
  /** Outputs of the stage's succeeded ancestors, by stage name. */
  outputs: Record<string, Record<string, unknown> | null>;
  builtIns: Record<string, unknown>;
}

const REFERENCE = /\{\{([\s\S]*?)\}\}/g;
const WHOLE = /^\{\{([\s\S]*?)\}\}$/;

function dig(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function lookUp(reference: VariableReference, scope: VariableScope): unknown {
  if (reference.kind === 'built-in') return scope.builtIns[reference.name];
  if (reference.kind === 'input') return dig(scope.inputs, reference.field);
  return dig(scope.outputs[reference.stage] ?? undefined, reference.field);
}

const asText = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);

function resolveText(text: string, scope: VariableScope): unknown {
  const whole = WHOLE.exec(text);
  if (whole && !(whole[1] ?? '').includes('}}')) {
    const reference = parseReference(whole[1] ?? '');
    if (reference) return lookUp(reference, scope) ?? '';
  }
  return text.replace(REFERENCE, (match, inner: string) => {
    const reference = parseReference(inner);
    return reference ? asText(lookUp(reference, scope)) : match;
  });
}

/** `value` with every reference in its strings filled in from `scope`. */
export function resolveVariables(value: unknown, scope: VariableScope): unknown {
  if (typeof value === 'string') return resolveText(value, scope);
  if (Array.isArray(value)) return value.map((entry) => resolveVariables(entry, scope));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, resolveVariables(entry, scope)]));
  }
  return value;
}
