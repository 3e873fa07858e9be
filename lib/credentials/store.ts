import { recordActivity } from '#lib/activity/activity-log';
import {
  actorOf,
  type Credential,
  type CredentialItem,
  credentialKeys,
  toCredential,
} from '#lib/credentials/credential-keys';
import {
  deleteCredentialItem,
  getCredentialItem,
  listCredentialItems,
  upsertCredentialItem,
} from '#lib/credentials/credential-records';
import { open, seal } from '#lib/credentials/envelope';
import type { Page, PageRequest } from '#lib/db/paging';
import { isConditionFailed, NotFoundError } from '#lib/errors';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

export { actorOf, type Credential } from '#lib/credentials/credential-keys';

/**
 * The organization's credential store: named secret values, each sealed by envelope encryption with the
 * key service of `ctx.ports.keys`. Lists show names, descriptions and timestamps only; a value leaves
 * the store only through `readCredentialValue` (for the service's own use) or `getCredential` (which
 * records the read in the activity log: who, which key, when).
 */

/**
 * Creates or replaces a credential (a fresh data key every time). Returns whether it was new.
 * Used by POST /credentials and by the service itself (integrations, webhook secrets).
 *
 * @example
 * await saveCredential(ctx, { orgId, key: 'webhook.git.secret', value, actor: 'system' });
 */
export async function saveCredential(
  ctx: RequestContext,
  input: { orgId: string; key: string; value: string; description?: string | null; actor: string },
): Promise<{ credential: Credential; created: boolean }> {
  const envelope = await seal(ctx.ports.keys, input.orgId, input.key, input.value);
  const at = ctx.ports.clock.now().toISOString();
  const { orgId, key, description, actor } = input;
  const old = await upsertCredentialItem({ orgId, key, description, actor, envelope, at });
  const item: CredentialItem = {
    ...credentialKeys.byKey(orgId, key),
    key,
    description: input.description === undefined ? (old?.description ?? null) : input.description,
    envelope,
    created_at: old?.created_at ?? at,
    updated_at: at,
    updated_by: input.actor,
  };
  return { credential: toCredential(item), created: !old };
}

/** The plain value of a credential for the service's own use, or undefined when there is none. */
export async function readCredentialValue(
  ctx: RequestContext,
  orgId: string,
  key: string,
): Promise<string | undefined> {
  const item = await getCredentialItem({ orgId, key });
  return item ? open(ctx.ports.keys, orgId, key, item.envelope) : undefined;
}

export async function listCredentials(ctx: RequestContext, page: PageRequest): Promise<Page<Credential>> {
  const principal = requirePrincipal(ctx);
  const result = await listCredentialItems({ orgId: principal.orgId, ...page });
  return { items: result.items.map(toCredential), total: result.total };
}

/** GET /credentials/{key}: the decrypted value, and an activity entry naming who read which key. */
export async function getCredential(ctx: RequestContext, key: string): Promise<Credential & { value: string }> {
  const principal = requirePrincipal(ctx);
  const item = await getCredentialItem({ orgId: principal.orgId, key });
  if (!item) throw new NotFoundError('Credential not found');
  const value = await open(ctx.ports.keys, principal.orgId, key, item.envelope);
  await recordActivity(
    principal.orgId,
    {
      actor_type: principal.method === 'api_key' ? 'api_key' : 'user',
      actor_id: actorOf(principal),
      action: 'credential.read',
      entity_type: 'credential',
      entity_id: key,
    },
    ctx.ports.clock.now(),
  );
  return { ...toCredential(item), value };
}

export async function putCredential(
  ctx: RequestContext,
  input: { key: string; value: string; description?: string | null },
): Promise<{ credential: Credential; created: boolean }> {
  const principal = requireOrgRole(ctx, 'admin');
  return saveCredential(ctx, { ...input, orgId: principal.orgId, actor: actorOf(principal) });
}

export async function deleteCredential(ctx: RequestContext, key: string): Promise<{ key: string }> {
  const principal = requireOrgRole(ctx, 'admin');
  try {
    await deleteCredentialItem({ orgId: principal.orgId, key });
  } catch (error) {
    if (isConditionFailed(error, 'missing')) throw new NotFoundError('Credential not found');
    throw error;
  }
  return { key };
}
