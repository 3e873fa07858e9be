import { describe, expect, it } from 'vitest';
import { builtInById, builtInBySlug, builtInTemplates, MODEL_TIERS } from '#lib/templates/built-in-templates';
import { appliedConfiguration, fillPlaceholders } from '#lib/templates/template-apply';
import { ORG_TEMPLATE_ID_BASE, TEMPLATE_CATEGORIES, TEMPLATE_SLUG_PATTERN } from '#lib/templates/template-keys';

describe('the built-in templates', () => {
  it('have ids 1 to 5 below the organization ids, valid unique slugs and one category each', () => {
    // Act
    const templates = builtInTemplates();

    // Assess
    expect(templates.map((template) => template.id)).toEqual([1, 2, 3, 4, 5]);
    expect(Math.max(...templates.map((template) => template.id))).toBeLessThan(ORG_TEMPLATE_ID_BASE);
    for (const template of templates) expect(template.slug).toMatch(TEMPLATE_SLUG_PATTERN);
    expect(templates.map((template) => template.category).sort()).toEqual([...TEMPLATE_CATEGORIES].sort());
    for (const template of templates) {
      expect(template.model).toBe(MODEL_TIERS[template.config.model_tier as keyof typeof MODEL_TIERS]);
    }
  });

  it('hands out copies that a caller cannot use to change the next read', () => {
    // Prepare
    const copy = builtInBySlug('devops');
    copy?.tools.push('rm -rf');
    if (copy) copy.name = 'Changed';

    // Act
    const again = builtInById(5);

    // Assess
    expect(again?.name).toBe('DevOps');
    expect(again?.tools).not.toContain('rm -rf');
  });
});

describe('fillPlaceholders', () => {
  const naming = { name: 'ops-1', display_name: 'Ops $& One' };

  it('fills in name and display_name, spaces inside the braces allowed, and leaves other placeholders', () => {
    // Act
    const text = fillPlaceholders('{{display_name}} / {{ name }} / {{unknown}} / {name}', naming);

    // Assess
    expect(text).toBe('Ops $& One / ops-1 / {{unknown}} / {name}');
  });

  it('leaves no placeholder of the agent in an applied built-in', () => {
    // Act
    const applied = builtInTemplates().map((template) => appliedConfiguration(template, naming));

    // Assess
    for (const config of applied) {
      expect(`${config.identity}${config.soul_content}${config.core_rules}`).not.toMatch(/\{\{\s*(display_)?name/);
      expect(config.identity).toContain('Ops $& One');
    }
  });
});
