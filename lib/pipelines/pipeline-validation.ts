import { agentKeys } from '#lib/agents/agent-keys';
import { getMany } from '#lib/db/batch';
import type { TableKey } from '#lib/db/keys';
import { type ErrorDetail, ValidationError } from '#lib/errors';
import {
  MAX_STAGES,
  RESERVED_STAGE_NAMES,
  STAGE_NAME_PATTERN,
  STAGE_TIMEOUT_MAX,
  type Stage,
} from '#lib/pipelines/pipeline-keys';
import { referencesIn } from '#lib/pipelines/pipeline-variables';
import { BUILT_IN_SLUGS } from '#lib/templates/built-in-templates';
import type { TemplateItem, TemplateSlugItem } from '#lib/templates/template-keys';
import { templateKeys } from '#lib/templates/template-keys';

/**
 * The rules a pipeline's stages obey, checked on create, update and clone. The checks on the stages
 * themselves are pure (`stageProblems`); only whether each `agent` exists reads the table, in two batched
 * reads whatever the number of stages (`unknownAgents`). Every problem is reported at once, each with
 * the path of the value at fault (`stages[2].depends_on[0]`).
 */

/** A stage as a request gives it: `order` defaults to its position (1, 2, …), the rest to empty. */
export interface StageInput {
  name: string;
  agent: string;
  order?: number | undefined;
  depends_on?: string[] | undefined;
  config?: Record<string, unknown> | undefined;
}

/** The stored stages take everything as given, with the defaults filled in. */
export const normalizeStages = (stages: StageInput[]): Stage[] =>
  stages.map((stage, index) => ({
    name: stage.name,
    agent: stage.agent,
    order: stage.order ?? index + 1,
    depends_on: [...(stage.depends_on ?? [])],
    config: structuredClone(stage.config ?? {}),
  }));

/** Stages as JSON are at most this large, so that a pipeline always fits in one item. */
export const MAX_STAGES_BYTES = 300_000;

/** An agent name or a template slug: the shape both share; anything else cannot name one. */
const AGENT_REF_PATTERN = /^[a-z][a-z0-9-]{0,63}$/;

/** The first index of each stage name (a duplicate is reported, and the first one stands for it). */
const indexByName = (stages: ReadonlyArray<Pick<Stage, 'name'>>): Map<string, number> => {
  const index = new Map<string, number>();
  stages.forEach((stage, at) => {
    if (!index.has(stage.name)) index.set(stage.name, at);
  });
  return index;
};

/** The dependencies of each stage that name another, known stage, by index. */
function edges(stages: ReadonlyArray<Pick<Stage, 'name' | 'depends_on'>>): number[][] {
  const index = indexByName(stages);
  return stages.map((stage, at) =>
    stage.depends_on.map((name) => index.get(name)).filter((to): to is number => to !== undefined && to !== at),
  );
}

/**
 * The cycles of depends_on, each as stage names in depends-on order and closed (`['a', 'b', 'a']`: a
 * depends on b, b on a), starting at the stage listed first; each cycle once. Self-dependencies are
 * problems of their own, not cycles here.
 */
export function findCycles(stages: ReadonlyArray<Pick<Stage, 'name' | 'depends_on'>>): string[][] {
  const next = edges(stages);
  const state = new Array<'new' | 'open' | 'done'>(stages.length).fill('new');
  const path: number[] = [];
  const seen = new Set<string>();
  const cycles: string[][] = [];
  const visit = (at: number): void => {
    state[at] = 'open';
    path.push(at);
    for (const to of next[at] ?? []) {
      if (state[to] === 'new') visit(to);
      else if (state[to] === 'open') {
        const loop = path.slice(path.indexOf(to));
        const first = loop.indexOf(Math.min(...loop));
        const rotated = [...loop.slice(first), ...loop.slice(0, first)];
        const key = rotated.join(',');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...rotated, rotated[0] as number].map((index) => stages[index]?.name as string));
        }
      }
    }
    path.pop();
    state[at] = 'done';
  };
  for (let at = 0; at < stages.length; at += 1) if (state[at] === 'new') visit(at);
  return cycles;
}

/** Each stage's ancestors: the stages it depends on, directly or through others (by name). */
export function ancestorsOf(stages: ReadonlyArray<Pick<Stage, 'name' | 'depends_on'>>): Map<string, Set<string>> {
  const next = edges(stages);
  const ancestors = new Map<string, Set<string>>();
  stages.forEach((stage, at) => {
    if (ancestors.has(stage.name)) return;
    const reached = new Set<number>();
    const pending = [...(next[at] ?? [])];
    while (pending.length > 0) {
      const index = pending.pop() as number;
      if (reached.has(index)) continue;
      reached.add(index);
      pending.push(...(next[index] ?? []));
    }
    ancestors.set(stage.name, new Set([...reached].map((index) => stages[index]?.name as string)));
  });
  return ancestors;
}

/**
 * The stage names in an order that runs every stage after its dependencies; among stages ready at once,
 * by `order`, then position. Throws on a cycle (validated stages have none).
 */
export function topologicalOrder(stages: ReadonlyArray<Pick<Stage, 'name' | 'depends_on' | 'order'>>): string[] {
  const next = edges(stages);
  const waiting = next.map((dependencies) => new Set(dependencies).size);
  const dependents = stages.map(() => [] as number[]);
  next.forEach((dependencies, at) => {
    for (const from of new Set(dependencies)) dependents[from]?.push(at);
  });
  const rank = (index: number) => [stages[index]?.order ?? 0, index] as const;
  const before = (a: number, b: number) => rank(a)[0] - rank(b)[0] || a - b;
  const ready = stages.map((_, at) => at).filter((at) => waiting[at] === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    ready.sort(before);
    const at = ready.shift() as number;
    order.push(stages[at]?.name as string);
    for (const dependent of dependents[at] ?? []) {
      waiting[dependent] = (waiting[dependent] ?? 0) - 1;
      if (waiting[dependent] === 0) ready.push(dependent);
    }
  }
  if (order.length !== stages.length) throw new Error('The stages form a cycle and have no order');
  return order;
}

function nameProblems(stages: readonly Stage[]): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const first = new Map<string, number>();
  stages.forEach((stage, at) => {
    const path = `stages[${at}].name`;
    if (!STAGE_NAME_PATTERN.test(stage.name)) {
      problems.push({
        path,
        message:
          `"${stage.name}" is not a stage name: ` +
          'lowercase letters, digits, _ and -, starting with a letter, at most 64',
      });
    } else if (RESERVED_STAGE_NAMES.has(stage.name)) {
      problems.push({ path, message: `"${stage.name}" is reserved ({{input.<field>}} names the inputs)` });
    }
    const earlier = first.get(stage.name);
    if (earlier === undefined) first.set(stage.name, at);
    else problems.push({ path, message: `"${stage.name}" is also the name of stages[${earlier}]; names are unique` });
  });
  return problems;
}

function dependencyProblems(stages: readonly Stage[]): ErrorDetail[] {
  const names = indexByName(stages);
  const problems: ErrorDetail[] = [];
  stages.forEach((stage, at) => {
    const listed = new Set<string>();
    stage.depends_on.forEach((name, position) => {
      const path = `stages[${at}].depends_on[${position}]`;
      if (name === stage.name) problems.push({ path, message: `stage "${stage.name}" cannot depend on itself` });
      else if (!names.has(name)) problems.push({ path, message: `"${name}" is not a stage of this pipeline` });
      else if (listed.has(name)) problems.push({ path, message: `"${name}" is listed twice` });
      listed.add(name);
    });
  });
  for (const cycle of findCycles(stages)) {
    const at = names.get(cycle[0] as string) ?? 0;
    problems.push({
      path: `stages[${at}].depends_on`,
      message: `depends_on forms a cycle: ${cycle.join(' → ')} (each stage depends on the next)`,
      cycle,
    });
  }
  return problems;
}

function configProblems(stage: Stage, at: number): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const { max_tokens: maxTokens, timeout_sec: timeout } = stage.config;
  if (maxTokens !== undefined && !(Number.isSafeInteger(maxTokens) && (maxTokens as number) > 0)) {
    problems.push({ path: `stages[${at}].config.max_tokens`, message: 'must be a positive integer' });
  }
  if (
    timeout !== undefined &&
    !(Number.isInteger(timeout) && (timeout as number) >= 1 && (timeout as number) <= STAGE_TIMEOUT_MAX)
  ) {
    problems.push({
      path: `stages[${at}].config.timeout_sec`,
      message: `must be an integer from 1 to ${STAGE_TIMEOUT_MAX}`,
    });
  }
  return problems;
}

function referenceProblems(stages: readonly Stage[]): ErrorDetail[] {
  const names = indexByName(stages);
  const ancestors = ancestorsOf(stages);
  const problems: ErrorDetail[] = [];
  stages.forEach((stage, at) => {
    for (const found of referencesIn(stage.config, `stages[${at}].config`)) {
      if (found.problem) {
        problems.push({ path: found.path, message: found.problem });
        continue;
      }
      if (found.reference?.kind !== 'stage') continue;
      const target = found.reference.stage;
      let message: string | undefined;
      if (target === stage.name) message = `${found.text} refers to its own stage "${target}"`;
      else if (!names.has(target))
        message = `${found.text} refers to "${target}", which is not a stage of this pipeline`;
      else if (!ancestors.get(stage.name)?.has(target)) {
        message =
          `${found.text} refers to stage "${target}", which is not an ancestor of "${stage.name}": ` +
          `add "${target}" to depends_on, directly or through another stage`;
      }
      if (message) problems.push({ path: found.path, message });
    }
  });
  return problems;
}

/** Every problem of the stages that needs no read: count, names, dependencies, cycles, config, references. */
export function stageProblems(stages: readonly Stage[]): ErrorDetail[] {
  if (stages.length === 0) return [{ path: 'stages', message: 'a pipeline has at least one stage' }];
  if (stages.length > MAX_STAGES) {
    return [{ path: 'stages', message: `a pipeline has at most ${MAX_STAGES} stages (${stages.length} given)` }];
  }
  if (Buffer.byteLength(JSON.stringify(stages)) > MAX_STAGES_BYTES) {
    return [{ path: 'stages', message: `the stages are larger than ${MAX_STAGES_BYTES} bytes as JSON` }];
  }
  return [
    ...nameProblems(stages),
    ...dependencyProblems(stages),
    ...stages.flatMap(configProblems),
    ...referenceProblems(stages),
  ];
}

/**
 * The names among `names` that are neither an agent of the organization nor a template it may use (a
 * built-in, or one of its own that is not archived). Two batched reads at most: the agent name and
 * template slug guards of every name at once, then the templates those guards name.
 */
export async function unknownAgents(orgId: string, names: Iterable<string>): Promise<Set<string>> {
  const unknown = new Set<string>();
  const toRead: string[] = [];
  for (const name of new Set(names)) {
    if (BUILT_IN_SLUGS.has(name)) continue;
    if (AGENT_REF_PATTERN.test(name)) toRead.push(name);
    else unknown.add(name);
  }
  if (toRead.length === 0) return unknown;
  const guards = await getMany<TableKey & Partial<TemplateSlugItem>>(
    toRead.flatMap((name) => [agentKeys.byName(orgId, name), templateKeys.slug(orgId, name)]),
  );
  const templateOf = new Map<string, number>();
  toRead.forEach((name, at) => {
    const [agent, slug] = [guards[2 * at], guards[2 * at + 1]];
    if (agent) return;
    if (slug?.template_id !== undefined) templateOf.set(name, slug.template_id);
    else unknown.add(name);
  });
  if (templateOf.size === 0) return unknown;
  const entries = [...templateOf];
  const templates = await getMany<TemplateItem>(entries.map(([, id]) => templateKeys.byId(orgId, id)));
  entries.forEach(([name], at) => {
    if (templates[at]?.status !== 'active') unknown.add(name);
  });
  return unknown;
}

/** Throws the 400 of every problem of the stages, the unknown agents among them; answers when there is none. */
export async function validateStages(orgId: string, stages: readonly Stage[]): Promise<void> {
  const problems = stageProblems(stages);
  if (stages.length > 0 && stages.length <= MAX_STAGES) {
    const unknown = await unknownAgents(
      orgId,
      stages.map((stage) => stage.agent),
    );
    stages.forEach((stage, at) => {
      if (!unknown.has(stage.agent)) return;
      problems.push({
        path: `stages[${at}].agent`,
        message:
          `"${stage.agent}" is neither an agent of the organization nor a template slug ` +
          '(a built-in, or one of its own that is not archived)',
      });
    });
  }
  if (problems.length > 0) throw new ValidationError('The pipeline is not valid', problems);
}
