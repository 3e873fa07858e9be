import { setTimeout as sleep } from 'node:timers/promises';
import { recordActivity } from '#lib/activity/activity-log';
import type { Principal, RequestContext } from '#lib/context';
import { actorOf, readCredentialValue, saveCredential } from '#lib/credentials/store';
import { type TableKey, tenantPk } from '#lib/db/keys';
import { isConditionFailed, table } from '#lib/db/table';
import { type ErrorDetail, ForbiddenError, ServiceUnavailableError, ValidationError } from '#lib/errors';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import type { Clock, KeyManagement } from '#lib/kernel/ports';
import { WEBHOOK_EVENTS, type WebhookEvent } from '#lib/webhooks/outbound/event-types';
import { generateSigningSecret } from '#lib/webhooks/outbound/signing';
import { webhookUrlProblem } from '#lib/webhooks/outbound/targets';

/**
 * The tenant's configuration of outbound webhooks: a URL per event and the signing secret. The URLs
 * live on one item per organization; the secret lives in the organization's credential store
 * (`webhook.signing.secret`), sealed like every other credential and never written anywhere else.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | tenant configuration | `T#<org>` | `TENANTCONFIG` | `hook_<event>` attributes, one per registered URL |
 */
export const tenantConfigKey = (orgId: string): TableKey => ({ pk: tenantPk(orgId), sk: 'TENANTCONFIG' });

export const SIGNING_SECRET_KEY = 'webhook.signing.secret';

/** Each URL is its own attribute, so that two PATCHes of different events never undo each other. */
const hookAttribute = (event: WebhookEvent) => `hook_${event}`;

interface TenantConfigItem {
  pk: string;
  sk: string;
  created_at?: string;
  updated_at?: string;
  updated_by?: string;
  secret_rotated_at?: string;
  /** Epoch ms until which one caller is creating the first signing secret. */
  secret_claim_until?: number;
  [hook: `hook_${string}`]: string | undefined;
}

export type WebhookTargets = Record<WebhookEvent, string | null>;

export interface TenantConfig {
  webhooks: WebhookTargets;
  /** Only organization admins and owners see it; null for everyone else. */
  signing_secret: string | null;
  /** Null until the configuration is first changed. */
  updated_at: string | null;
}

export interface TenantConfigDeps {
  keys: KeyManagement;
}

export interface TenantConfigWriteDeps extends TenantConfigDeps {
  allowPrivateTargets: boolean;
}

async function getConfigItem(orgId: string): Promise<TenantConfigItem | undefined> {
  const result = await table.get({ Key: tenantConfigKey(orgId), ConsistentRead: true });
  return result.Item as TenantConfigItem | undefined;
}

const targetsOf = (item: TenantConfigItem | undefined): WebhookTargets =>
  Object.fromEntries(
    WEBHOOK_EVENTS.map((event) => [event, item?.[`hook_${event}`] ?? null]),
  ) as WebhookTargets;

/** The registered URL of every event (null where none is), for publishing. */
export async function readWebhookTargets(orgId: string): Promise<WebhookTargets> {
  return targetsOf(await getConfigItem(orgId));
}

const toTenantConfig = (item: TenantConfigItem | undefined, secret: string | null): TenantConfig => ({
  webhooks: targetsOf(item),
  signing_secret: secret,
  updated_at: item?.updated_at ?? null,
});

function isOrgAdmin(ctx: RequestContext): boolean {
  try {
    requireOrgRole(ctx, 'admin');
    return true;
  } catch (error) {
    if (error instanceof ForbiddenError) return false;
    throw error;
  }
}

const actorType = (principal: Principal) => (principal.method === 'api_key' ? 'api_key' : 'user');

/** How long the caller that creates the first secret holds the right to; others wait for its result. */
const SECRET_CLAIM_MS = 10_000;
const SECRET_WAIT_ROUNDS = 50;
const SECRET_WAIT_MS = 100;

/**
 * Takes the right to create the organization's first signing secret. The credential store replaces a
 * value unconditionally, so without this two first reads at the same moment would each create a
 * secret and one of them would be shown to an admin but never used. The claim expires, so a caller
 * that dies before saving does not block the next one for long.
 */
async function claimSecretCreation(orgId: string, now: Date): Promise<boolean> {
  try {
    await table.update({
      Key: tenantConfigKey(orgId),
      UpdateExpression: 'SET secret_claim_until = :until, created_at = if_not_exists(created_at, :at)',
      ConditionExpression: 'attribute_not_exists(secret_claim_until) OR secret_claim_until < :nowMs',
      ExpressionAttributeValues: {
        ':until': now.getTime() + SECRET_CLAIM_MS,
        ':nowMs': now.getTime(),
        ':at': now.toISOString(),
      },
    });
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}

/**
 * The organization's signing secret, created on first use. Used by the endpoints (actor: the caller)
 * and by each delivery attempt (actor: `system`), which reads it afresh so that a rotation takes
 * effect for the very next attempt.
 */
export async function ensureSigningSecret(
  keys: KeyManagement,
  orgId: string,
  actor: string,
  clock: Clock,
): Promise<string> {
  for (let round = 0; round < SECRET_WAIT_ROUNDS; round++) {
    const existing = await readCredentialValue(keys, orgId, SIGNING_SECRET_KEY);
    if (existing) return existing;
    if (await claimSecretCreation(orgId, clock.now())) {
      const secret = generateSigningSecret();
      await saveCredential(keys, {
        orgId,
        key: SIGNING_SECRET_KEY,
        value: secret,
        description:
          'Signs outbound webhooks (Standard Webhooks); rotate with POST /tenant-config/webhook-secret/rotate',
        actor,
        now: clock.now(),
      });
      return secret;
    }
    await sleep(SECRET_WAIT_MS);
  }
  throw new ServiceUnavailableError('The webhook signing secret is being created; try again');
}

/** GET /tenant-config: the URLs for everyone in the organization, the secret for its admins only. */
export async function getTenantConfig(ctx: RequestContext, deps: TenantConfigDeps): Promise<TenantConfig> {
  const principal = requirePrincipal(ctx);
  const item = await getConfigItem(principal.orgId);
  if (!isOrgAdmin(ctx)) return toTenantConfig(item, null);
  const secret = await ensureSigningSecret(deps.keys, principal.orgId, actorOf(principal), ctx.clock);
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
    ctx.clock.now(),
  );
  return toTenantConfig(item, secret);
}

/**
 * PATCH /tenant-config: sets (URL) or removes (null) the URL of each event given; events not given keep
 * theirs. Every URL is checked before anything is written, and all changes land in one UpdateItem.
 */
export async function updateTenantConfig(
  ctx: RequestContext,
  body: { webhooks: Partial<Record<WebhookEvent, string | null>> },
  deps: TenantConfigWriteDeps,
): Promise<TenantConfig> {
  const principal = requireOrgRole(ctx, 'admin');
  const changes = Object.entries(body.webhooks).filter(([, url]) => url !== undefined) as Array<
    [WebhookEvent, string | null]
  >;
  const problems: ErrorDetail[] = [];
  for (const [event, url] of changes) {
    const problem = url === null ? undefined : webhookUrlProblem(url, deps);
    if (problem) problems.push({ path: `body.webhooks.${event}`, message: problem });
  }
  if (problems.length > 0) throw new ValidationError('The webhook URLs are not valid', problems);

  const now = ctx.clock.now();
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {
    ':at': now.toISOString(),
    ':actor': actorOf(principal),
  };
  const sets = ['updated_at = :at', 'updated_by = :actor', 'created_at = if_not_exists(created_at, :at)'];
  const removes: string[] = [];
  for (const [index, [event, url]] of changes.entries()) {
    names[`#hook${index}`] = hookAttribute(event);
    if (url === null) {
      removes.push(`#hook${index}`);
    } else {
      // Stored as the URL parser writes it, so that what is shown is exactly what is called.
      values[`:hook${index}`] = new URL(url).href;
      sets.push(`#hook${index} = :hook${index}`);
    }
  }
  const result = await table.update({
    Key: tenantConfigKey(principal.orgId),
    UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ...(changes.length > 0 ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
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
      },
    },
    now,
  );
  const secret = await ensureSigningSecret(deps.keys, principal.orgId, actorOf(principal), ctx.clock);
  return toTenantConfig(result.Attributes as TenantConfigItem, secret);
}

/**
 * POST /tenant-config/webhook-secret/rotate: a new secret replaces the old one at once. There is no
 * overlap: from this moment every attempt, retries of earlier events included, is signed with the new
 * secret only, so receivers must switch when they receive it.
 */
export async function rotateSigningSecret(
  ctx: RequestContext,
  deps: TenantConfigDeps,
): Promise<TenantConfig> {
  const principal = requireOrgRole(ctx, 'admin');
  const now = ctx.clock.now();
  const secret = generateSigningSecret();
  await saveCredential(deps.keys, {
    orgId: principal.orgId,
    key: SIGNING_SECRET_KEY,
    value: secret,
    actor: actorOf(principal),
    now,
  });
  const result = await table.update({
    Key: tenantConfigKey(principal.orgId),
    UpdateExpression:
      'SET updated_at = :at, updated_by = :actor, secret_rotated_at = :at, created_at = if_not_exists(created_at, :at)',
    ExpressionAttributeValues: { ':at': now.toISOString(), ':actor': actorOf(principal) },
    ReturnValues: 'ALL_NEW',
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
  return toTenantConfig(result.Attributes as TenantConfigItem, secret);
}
