import { setTimeout as sleep } from 'node:timers/promises';
import { recordActivity } from '#lib/activity/activity-log';
import { actorOf, readCredentialValue, saveCredential } from '#lib/credentials/store';
import { deployPipelineProblem } from '#lib/deployments/deploy-pipeline';
import { type ErrorDetail, ServiceUnavailableError, ValidationError } from '#lib/errors';
import { hasOrgRole, requireOrgRole, requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import type { WebhookEvent } from '#lib/webhooks/outbound/event-types';
import { generateSigningSecret } from '#lib/webhooks/outbound/signing';
import { webhookUrlProblem } from '#lib/webhooks/outbound/targets';
import { SIGNING_SECRET_KEY, type TenantConfig, toTenantConfig } from '#lib/webhooks/outbound/tenant-config-keys';
import {
  claimSecretCreation,
  getTenantConfigItem,
  markSecretRotated,
  updateTenantConfigItem,
} from '#lib/webhooks/outbound/tenant-config-records';

/**
 * The tenant's configuration: outbound webhooks (a URL per event and the signing secret) and the deploy
 * pipeline a push to the default branch runs (records: lib/webhooks/outbound/tenant-config-keys.ts). The
 * secret is sealed with `ctx.ports.keys` like every other credential.
 */

export type { TenantConfig, WebhookTargets } from '#lib/webhooks/outbound/tenant-config-keys';

const actorType = (principal: Principal) => (principal.method === 'api_key' ? 'api_key' : 'user');

/** How long the caller that creates the first secret holds the right to; others wait for its result. */
const SECRET_CLAIM_MS = 10_000;
const SECRET_WAIT_ROUNDS = 50;
const SECRET_WAIT_MS = 100;

/**
 * The organization's signing secret, created on first use. Used by the endpoints (actor: the caller)
 * and by each delivery attempt (actor: `system`), which reads it afresh so that a rotation takes
 * effect for the very next attempt.
 *
 * The credential store replaces a value unconditionally, so without a claim two first reads at the same
 * moment would each create a secret and one of them would be shown to an admin but never used. The
 * claim expires, so a caller that dies before saving does not block the next one for long.
 */
export async function ensureSigningSecret(ctx: RequestContext, orgId: string, actor: string): Promise<string> {
  for (let round = 0; round < SECRET_WAIT_ROUNDS; round++) {
    const existing = await readCredentialValue(ctx, orgId, SIGNING_SECRET_KEY);
    if (existing) return existing;
    const now = ctx.ports.clock.now();
    if (await claimSecretCreation({ orgId, now, until: now.getTime() + SECRET_CLAIM_MS })) {
      const secret = generateSigningSecret();
      await saveCredential(ctx, {
        orgId,
        key: SIGNING_SECRET_KEY,
        value: secret,
        description:
          'Signs outbound webhooks (Standard Webhooks); rotate with POST /tenant-config/webhook-secret/rotate',
        actor,
      });
      return secret;
    }
    await sleep(SECRET_WAIT_MS);
  }
  throw new ServiceUnavailableError('The webhook signing secret is being created; try again');
}

/** GET /tenant-config: the URLs for everyone in the organization, the secret for its admins only. */
export async function getTenantConfig(ctx: RequestContext): Promise<TenantConfig> {
  const principal = requirePrincipal(ctx);
  const item = await getTenantConfigItem(principal.orgId);
  if (!hasOrgRole(ctx, 'admin')) return toTenantConfig(item, null);
  const secret = await ensureSigningSecret(ctx, principal.orgId, actorOf(principal));
  // As with GET /credentials/{key}: a disclosed secret leaves a trace of who saw it.
  await recordActivity(
    principal.orgId,
    {
      actor_type: actorType(principal),
      actor_id: actorOf(principal),
      action: 'webhook_secret.read',
      entity_type: 'tenant_config',
      entity_id: 'webhooks',
    },
    ctx.ports.clock.now(),
  );
  return toTenantConfig(item, secret);
}

/**
 * PATCH /tenant-config: sets (URL) or removes (null) the URL of each event given; events not given keep
 * theirs. `deploy_pipeline_id`, when given, names the deploy pipeline (a pipeline of the organization)
 * or removes it (null). Everything is checked before anything is written, and all changes land in one
 * UpdateItem. `allowPrivateTargets` is the deployment's policy (lib/webhooks/outbound/targets).
 */
export async function updateTenantConfig(
  ctx: RequestContext,
  body: {
    webhooks?: Partial<Record<WebhookEvent, string | null | undefined>> | undefined;
    deploy_pipeline_id?: number | null | undefined;
  },
  policy: { allowPrivateTargets: boolean },
): Promise<TenantConfig> {
  const principal = requireOrgRole(ctx, 'admin');
  const changes = Object.entries(body.webhooks ?? {}).filter(([, url]) => url !== undefined) as Array<
    [WebhookEvent, string | null]
  >;
  const problems: ErrorDetail[] = [];
  for (const [event, url] of changes) {
    const problem = url === null ? undefined : webhookUrlProblem(url, policy);
    if (problem) problems.push({ path: `webhooks.${event}`, message: problem });
  }
  const pipelineId = body.deploy_pipeline_id;
  const pipelineProblem = typeof pipelineId === 'number' && (await deployPipelineProblem(principal.orgId, pipelineId));
  if (pipelineProblem) problems.push({ path: 'deploy_pipeline_id', message: pipelineProblem });
  if (problems.length > 0) throw new ValidationError('The configuration is not valid', problems);

  const now = ctx.ports.clock.now();
  const item = await updateTenantConfigItem({
    orgId: principal.orgId,
    // Stored as the URL parser writes it, so that what is shown is exactly what is called.
    changes: changes.map(([event, url]) => [event, url === null ? null : new URL(url).href]),
    deployPipelineId: pipelineId,
    actor: actorOf(principal),
    at: now.toISOString(),
  });
  await recordActivity(
    principal.orgId,
    {
      actor_type: actorType(principal),
      actor_id: actorOf(principal),
      action: 'tenant_config.updated',
      entity_type: 'tenant_config',
      entity_id: 'webhooks',
      // Event names only: a URL may carry a token of the receiver in its query string.
      metadata: {
        set: changes.filter(([, url]) => url !== null).map(([event]) => event),
        removed: changes.filter(([, url]) => url === null).map(([event]) => event),
        ...(pipelineId === undefined ? {} : { deploy_pipeline_id: pipelineId }),
      },
    },
    now,
  );
  const secret = await ensureSigningSecret(ctx, principal.orgId, actorOf(principal));
  return toTenantConfig(item, secret);
}

/**
 * POST /tenant-config/webhook-secret/rotate: a new secret replaces the old one at once. There is no
 * overlap: from this moment every attempt, retries of earlier events included, is signed with the new
 * secret only, so receivers must switch when they receive it.
 */
export async function rotateSigningSecret(ctx: RequestContext): Promise<TenantConfig> {
  const principal = requireOrgRole(ctx, 'admin');
  const secret = generateSigningSecret();
  await saveCredential(ctx, {
    orgId: principal.orgId,
    key: SIGNING_SECRET_KEY,
    value: secret,
    actor: actorOf(principal),
  });
  const now = ctx.ports.clock.now();
  const item = await markSecretRotated({
    orgId: principal.orgId,
    actor: actorOf(principal),
    at: now.toISOString(),
  });
  await recordActivity(
    principal.orgId,
    {
      actor_type: actorType(principal),
      actor_id: actorOf(principal),
      action: 'webhook_secret.rotated',
      entity_type: 'tenant_config',
      entity_id: 'webhooks',
    },
    now,
  );
  return toTenantConfig(item, secret);
}
