import { recordActivity } from '#lib/activity/activity-log';
import { credentialUpdateTimes } from '#lib/credentials/credential-records';
import { actorOf, saveCredential } from '#lib/credentials/store';
import { type ErrorDetail, NotFoundError, ValidationError } from '#lib/errors';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import { credentialNameOf, findIntegration, INTEGRATIONS, type Integration } from '#lib/integrations/catalogue';
import type { RequestContext } from '#lib/kernel/context';
import { webhookUrlProblem } from '#lib/webhooks/outbound/targets';

type TargetPolicy = { allowPrivateTargets: boolean };

export type IntegrationState = 'configured' | 'partially_configured' | 'not_configured';

export interface IntegrationStatus {
  id: string;
  name: string;
  category: string;
  description: string;
  status: IntegrationState;
  fields: Array<{ name: string; label: string; required: boolean; format: string; configured: boolean }>;
  updated_at: string | null;
}

function statusOf(integration: Integration, stored: Map<string, string>): IntegrationStatus {
  const fields = integration.fields.map((field) => ({
    name: field.name,
    label: field.label,
    required: field.required,
    format: field.format,
    configured: stored.has(credentialNameOf(integration, field)),
  }));
  const required = fields.filter((field) => field.required);
  const present = fields.filter((field) => field.configured);
  const status: IntegrationState = required.every((field) => field.configured)
    ? 'configured'
    : present.length > 0
      ? 'partially_configured'
      : 'not_configured';
  const times = integration.fields
    .map((field) => stored.get(credentialNameOf(integration, field)))
    .filter((time): time is string => time !== undefined)
    .sort();
  return {
    id: integration.id,
    name: integration.name,
    category: integration.category,
    description: integration.description,
    status,
    fields,
    updated_at: times.at(-1) ?? null,
  };
}

export async function listIntegrations(ctx: RequestContext): Promise<IntegrationStatus[]> {
  const stored = await credentialUpdateTimes(requirePrincipal(ctx).orgId);
  return INTEGRATIONS.map((integration) => statusOf(integration, stored));
}

export async function integrationStatus(ctx: RequestContext, id: string): Promise<IntegrationStatus> {
  const integration = findIntegration(id);
  if (!integration) throw new NotFoundError(`No integration named ${id}`);
  return statusOf(integration, await credentialUpdateTimes(requirePrincipal(ctx).orgId));
}

/**
 * What is wrong with a field's value, by its format, or undefined. The service calls a `url` field from
 * inside its network, so it is held to the rules of outbound webhook targets (lib/webhooks/outbound/targets).
 */
const FORMAT_PROBLEMS: Record<string, (value: string, policy: TargetPolicy) => string | undefined> = {
  url: (value, policy) => webhookUrlProblem(value, policy),
  email: (value) => (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value) ? undefined : 'must be a valid email'),
};

/**
 * Stores the given fields in the credential store (each sealed on its own) after checking them all:
 * unknown fields, malformed values and required fields that are neither given nor already stored are
 * refused together, before anything is written. `policy` is the deployment's rule for private targets.
 */
export async function configureIntegration(
  ctx: RequestContext,
  id: string,
  fields: Record<string, string>,
  policy: TargetPolicy,
): Promise<IntegrationStatus> {
  const principal = requireOrgRole(ctx, 'admin');
  const integration = findIntegration(id);
  if (!integration) throw new NotFoundError(`No integration named ${id}`);
  const stored = await credentialUpdateTimes(principal.orgId);
  const problems: ErrorDetail[] = [];
  for (const name of Object.keys(fields)) {
    if (!integration.fields.some((field) => field.name === name)) {
      problems.push({ path: `fields.${name}`, message: `is not a field of ${integration.name}` });
    }
  }
  for (const field of integration.fields) {
    const value = fields[field.name];
    if (value === undefined) {
      if (field.required && !stored.has(credentialNameOf(integration, field))) {
        problems.push({ path: `fields.${field.name}`, message: 'is required' });
      }
      continue;
    }
    const problem = FORMAT_PROBLEMS[field.format]?.(value, policy);
    if (problem) problems.push({ path: `fields.${field.name}`, message: problem });
  }
  if (problems.length > 0) throw new ValidationError(`The ${integration.name} fields are not valid`, problems);

  for (const field of integration.fields) {
    const value = fields[field.name];
    if (value === undefined) continue;
    const { credential } = await saveCredential(ctx, {
      orgId: principal.orgId,
      key: credentialNameOf(integration, field),
      value,
      description: `${integration.name}: ${field.label}`,
      actor: actorOf(principal),
    });
    stored.set(credential.key, credential.updated_at);
  }
  await recordActivity(
    principal.orgId,
    {
      actor_type: principal.method === 'api_key' ? 'api_key' : 'user',
      actor_id: actorOf(principal),
      action: 'integration.configured',
      entity_type: 'integration',
      entity_id: integration.id,
      metadata: { fields: Object.keys(fields) },
    },
    ctx.ports.clock.now(),
  );
  return statusOf(integration, stored);
}
