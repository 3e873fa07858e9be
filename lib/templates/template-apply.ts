import { ConflictError } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import type { Template } from '#lib/templates/template-keys';
import { getTemplate, type TemplateRef } from '#lib/templates/template-queries';

/**
 * Applying a template: POST /agent-templates/{idOrSlug}/apply. It writes nothing; the answer is an agent
 * configuration the client sends to POST /agents as it is, so it uses only that body's field names.
 */

export interface AppliedTemplate {
  name: string;
  display_name: string;
  model: string;
  interval_sec: number;
  identity: string;
  soul_content: string;
  core_rules: string;
  tools: string[];
  capabilities: string[];
  config: Record<string, unknown>;
  template_slug: string;
  template_name: string;
}

export interface AgentNaming {
  name: string;
  display_name: string;
}

/**
 * Fills in `{{name}}` and `{{display_name}}` (spaces inside the braces allowed) with the agent's own;
 * any other `{{…}}` is left as written.
 *
 * @example fillPlaceholders('You are {{display_name}}.', { name: 'dev', display_name: 'Dev' }) // 'You are Dev.'
 */
export function fillPlaceholders(text: string, naming: AgentNaming): string {
  return text.replace(/\{\{\s*(name|display_name)\s*\}\}/g, (_match, field: keyof AgentNaming) => naming[field]);
}

export function appliedConfiguration(template: Template, naming: AgentNaming): AppliedTemplate {
  return {
    name: naming.name,
    display_name: naming.display_name,
    model: template.model,
    interval_sec: template.interval_sec,
    identity: fillPlaceholders(template.identity, naming),
    soul_content: fillPlaceholders(template.soul_content, naming),
    core_rules: fillPlaceholders(template.core_rules, naming),
    tools: [...template.tools],
    capabilities: [...template.capabilities],
    config: structuredClone(template.config),
    template_slug: template.slug,
    template_name: template.name,
  };
}

/** The configuration of a new agent made from the template; an archived template is 409. */
export async function applyTemplate(
  ctx: RequestContext,
  ref: TemplateRef,
  naming: AgentNaming,
): Promise<AppliedTemplate> {
  const template = await getTemplate(ctx, ref);
  if (template.status === 'archived') {
    throw new ConflictError('The template is archived; archived templates cannot be applied');
  }
  return appliedConfiguration(template, naming);
}
