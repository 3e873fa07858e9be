import { describe, expect, it } from 'vitest';
import { declaredInputs, pipelineTemplateById, pipelineTemplates } from '#lib/pipelines/pipeline-templates';
import { stageProblems, topologicalOrder } from '#lib/pipelines/pipeline-validation';
import { parseReference, referencedInputs, referencesIn } from '#lib/pipelines/pipeline-variables';
import { BUILT_IN_SLUGS } from '#lib/templates/built-in-templates';

describe('the built-in pipeline templates', () => {
  const templates = pipelineTemplates();

  it('are feature delivery, data collection and incident response', () => {
    expect(templates.map((template) => template.id)).toEqual([
      'feature-delivery',
      'data-collection',
      'incident-response',
    ]);
  });

  it.each(pipelineTemplates().map((template) => [template.id, template] as const))(
    '%s validates, runs built-in agent templates and declares exactly the inputs it references',
    (_id, template) => {
      expect(stageProblems(template.stages)).toEqual([]);
      for (const stage of template.stages) expect(BUILT_IN_SLUGS.has(stage.agent)).toBe(true);
      expect(declaredInputs(template)).toEqual(referencedInputs(template.stages));
      const stageRefs = template.stages.flatMap((stage) =>
        referencesIn(stage.config, 'config').filter((found) => found.reference?.kind === 'stage'),
      );
      expect(stageRefs.length).toBeGreaterThan(0);
    },
  );

  it('runs test and review of feature delivery side by side, between implement and deploy', () => {
    // Act
    const order = topologicalOrder(pipelineTemplateById('feature-delivery')?.stages ?? []);

    // Assess
    expect(order).toEqual(['plan', 'implement', 'test', 'review', 'deploy']);
  });

  it('answers copies: a change to one does not reach the next read', () => {
    // Prepare
    const first = pipelineTemplateById('data-collection');
    if (first) first.stages[0]!.name = 'changed';

    // Act
    const again = pipelineTemplateById('data-collection');

    // Assess
    expect(again?.stages[0]?.name).toBe('scrape');
    expect(pipelineTemplateById('unknown')).toBeUndefined();
  });
});

describe('parseReference', () => {
  it.each([
    ['input.repo', { kind: 'input', field: 'repo' }],
    [' plan.summary ', { kind: 'stage', stage: 'plan', field: 'summary' }],
    ['build_1.result.items', { kind: 'stage', stage: 'build_1', field: 'result.items' }],
    ['now', { kind: 'built-in', name: 'now' }],
  ])('reads %j', (inner, expected) => {
    expect(parseReference(inner)).toEqual(expected);
  });

  it.each(['', 'foo', 'Plan.x', 'plan.', 'plan..x', 'plan.x-y', 'input'])('refuses %j', (inner) => {
    expect(parseReference(inner)).toBeUndefined();
  });
});

describe('referencedInputs', () => {
  it('lists each top-level input field once, sorted', () => {
    expect(
      referencedInputs([
        { config: { a: '{{input.zeta}} {{input.alpha.deep}}' } },
        { config: { b: ['{{input.zeta}}', { c: '{{plan.x}}' }] } },
      ]),
    ).toEqual(['alpha', 'zeta']);
  });
});
