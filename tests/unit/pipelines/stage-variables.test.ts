import { describe, expect, it } from 'vitest';
import type { ExecutionItem, StageItem } from '#lib/pipelines/execution-keys';
import { newExecutionTransactions } from '#lib/pipelines/execution-records';
import { resolveVariables, type VariableScope } from '#lib/pipelines/stage-variables';

const scope: VariableScope = {
  inputs: { feature: 'search', repo: { name: 'shop', stars: 3 }, task_id: 7 },
  outputs: { plan: { summary: 'a plan', steps: ['one', 'two'], detail: { depth: { level: 2 } } } },
  builtIns: { execution_id: 12, pipeline_id: 4, pipeline_name: 'Ship', stage_name: 'build', now: 'T', task_id: 7 },
};

describe('filling in a stage config’s variables', () => {
  it('writes references inside text, at any depth of objects and arrays', () => {
    // Act
    const resolved = resolveVariables(
      { prompt: 'Build {{input.feature}} for {{ input.repo.name }}', nested: [{ text: 'After {{plan.summary}}' }] },
      scope,
    );

    // Assess
    expect(resolved).toEqual({ prompt: 'Build search for shop', nested: [{ text: 'After a plan' }] });
  });

  it('gives a string that is one reference alone the value itself, whatever its type', () => {
    // Act
    const resolved = resolveVariables(
      { steps: '{{plan.steps}}', level: '{{plan.detail.depth.level}}', repo: '{{input.repo}}', id: '{{execution_id}}' },
      scope,
    );

    // Assess
    expect(resolved).toEqual({ steps: ['one', 'two'], level: 2, repo: { name: 'shop', stars: 3 }, id: 12 });
  });

  it('writes non-strings inside text as JSON and absent values as nothing', () => {
    // Act
    const resolved = resolveVariables(
      {
        text: 'Steps {{plan.steps}}; level {{plan.detail.depth.level}}; missing [{{plan.nope}}] [{{other.x}}]',
        alone: '{{plan.summary.deeper}}',
      },
      scope,
    );

    // Assess
    expect(resolved).toEqual({ text: 'Steps ["one","two"]; level 2; missing [] []', alone: '' });
  });

  it('leaves numbers, booleans and null as they are, and text that is no reference', () => {
    // Act
    const resolved = resolveVariables({ n: 3, flag: true, none: null, braces: 'a {{not a ref}} b' }, scope);

    // Assess
    expect(resolved).toEqual({ n: 3, flag: true, none: null, braces: 'a {{not a ref}} b' });
  });
});

describe('the transactions of a new execution', () => {
  const stageItem = (at: number) => ({ pk: 'T#o', sk: `PIPESTAGE#1#s${at}` }) as StageItem;
  const execution = { pk: 'T#o', sk: 'PIPEEXEC#1#1' } as ExecutionItem;

  it.each([
    [1, [2]],
    [99, [100]],
    [100, [99, 2]],
    [200, [99, 99, 3]],
  ])('puts %i stages in transactions of at most 100 items, the execution in the last', (count, sizes) => {
    // Act
    const groups = newExecutionTransactions(
      execution,
      Array.from({ length: count }, (_, at) => stageItem(at)),
    );

    // Assess
    expect(groups.map((group) => group.length)).toEqual(sizes);
    const last = groups.at(-1)?.at(-1) as { Put: { Item: unknown } };
    expect(last.Put.Item).toBe(execution);
  });

  it.each([
    [1, 5, [2]],
    [94, 5, [95]],
    [95, 5, [95, 1]],
    [200, 5, [99, 99, 3]],
    [198, 5, [99, 99, 1]],
  ])('leaves room in the last transaction for the caller: %i stages, %i items reserved', (count, reserved, sizes) => {
    // Act
    const groups = newExecutionTransactions(
      execution,
      Array.from({ length: count }, (_, at) => stageItem(at)),
      reserved,
    );

    // Assess
    expect(groups.map((group) => group.length)).toEqual(sizes);
    expect(groups.at(-1)?.length).toBeLessThanOrEqual(100 - reserved);
    const last = groups.at(-1)?.at(-1) as { Put: { Item: unknown } };
    expect(last.Put.Item).toBe(execution);
  });
});
