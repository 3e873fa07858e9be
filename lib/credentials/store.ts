import { recordActivity } from '#lib/activity/activity-log';
import type { Principal, RequestContext } from '#lib/context';
import { type Envelope, open, seal } from '#lib/credentials/envelope';
import { tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { isConditionFailed, table } from '#lib/db/table';
import { NotFoundError } from '#lib/errors';
import { requireOrgRole, requirePrincipal } from '#lib/identity/access';
import type { KeyManagement } from '#lib/kernel/ports';

/**
 * The organization's credential store: named secret values, each sealed by envelope encryption. Lists
 * show names, descriptions and timestamps only; a value leaves the store only through
 * `readCredentialValue` (for the service's own use) or `getCredential` (which records the read in the
 * activity log: who, which key, when).
 */
export const credentialKey = (orgId: string, key: string) => ({ pk: tenantPk(orgId), sk: `CRED#${key}` });

interface CredentialItem {
  pk: string;
  sk: string;
  key: string;
  description: string | null;
  envelope: Envelope;
  created_at: string;
  updated_at: string;
  updated_by: string;
}

export interface Credential {
  key: string;
  description: string | null;
  key_id: string;
  created_at: string;
  updated_at: string;
  updated_by: string;
}

const toCredential = (item: CredentialItem): Credential => ({
  key: item.key,
  description: item.description ?? null,
  key_id: item.envelope.key_id,
  created_at: item.created_at,
  updated_at: item.updated_at,
  updated_by: item.updated_by,
});

/** Who did it, for records and the activity log: `user:<id>` or `api_key:<id>`. */
export const actorOf = (principal: Principal): string =>
  principal.userId !== undefined ? `user:${principal.userId}` : `api_key:${principal.keyId}`;

/**
 * Creates or replaces a credential (a fresh data key every time). Returns whether it was new.
 * Used by POST /credentials and by the service itself (integrations, webhook secrets).
 */
export async function saveCredential(
  keys: KeyManagement,
  input: { orgId: string; key: string; value: string; description?: string | null; actor: string; now: Date },
): Promise<{ credential: Credential; created: boolean }> {
  const envelope = await seal(keys, input.orgId, input.key, input.value);
  const at = input.now.toISOString();
  // One UpdateItem: creates the credential or replaces its value, keeping its creation time (and its
  // description unless a new one is given). ALL_OLD tells which it was.
  const result = await table.update({
    Key: credentialKey(input.orgId, input.key),
    UpdateExpression: [
      'SET #key = :key, envelope = :envelope, updated_at = :at, updated_by = :actor',
      'created_at = if_not_exists(created_at, :at)',
      input.description === undefined
        ? 'description = if_not_exists(description, :none)'
        : 'description = :description',
    ].join(', '),
    ExpressionAttributeNames: { '#key': 'key' },
    ExpressionAttributeValues: {
      ':key': input.key,
      ':envelope': envelope,
      ':at': at,
      ':actor': input.actor,
      ...(input.description === undefined ? { ':none': null } : { ':description': input.description }),
    },
    ReturnValues: 'ALL_OLD',
  });
  const old = result.Attributes as CredentialItem | undefined;
  const item: CredentialItem = {
    ...credentialKey(input.orgId, input.key),
    key: input.key,
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
  keys: KeyManagement,
  orgId: string,
  key: string,
): Promise<string | undefined> {
  const found = await table.get({ Key: credentialKey(orgId, key) });
  const item = found.Item as CredentialItem | undefined;
  return item ? open(keys, orgId, key, item.envelope) : undefined;
}

export async function listCredentials(ctx: RequestContext, page: PageRequest): Promise<Page<Credential>> {
  const principal = requirePrincipal(ctx);
  const result = await queryPage<CredentialItem>(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :cred)',
      ExpressionAttributeValues: { ':pk': tenantPk(principal.orgId), ':cred': 'CRED#' },
      ProjectionExpression: '#key, description, envelope.key_id, created_at, updated_at, updated_by',
      ExpressionAttributeNames: { '#key': 'key' },
    },
    page,
  );
  return { items: result.items.map(toCredential), total: result.total };
}

/** GET /credentials/{key}: the decrypted value, and an activity entry naming who read which key. */
export async function getCredential(
  ctx: RequestContext,
  keys: KeyManagement,
  key: string,
): Promise<Credential & { value: string }> {
  const principal = requirePrincipal(ctx);
  const found = await table.get({ Key: credentialKey(principal.orgId, key) });
  const item = found.Item as CredentialItem | undefined;
  if (!item) throw new NotFoundError('Credential not found');
  const value = await open(keys, principal.orgId, key, item.envelope);
  await recordActivity(
    principal.orgId,
    {
      actor_type: principal.method === 'api_key' ? 'api_key' : 'user',
      actor_id: actorOf(principal),
      action: 'credential.read',
      entity_type: 'credential',
      entity_id: key,
    },
    ctx.clock.now(),
  );
  return { ...toCredential(item), value };
}

export async function putCredential(
  ctx: RequestContext,
  keys: KeyManagement,
  input: { key: string; value: string; description?: string | null },
): Promise<{ credential: Credential; created: boolean }> {
  const principal = requireOrgRole(ctx, 'admin');
  return saveCredential(keys, {
    ...input,
    orgId: principal.orgId,
    actor: actorOf(principal),
    now: ctx.clock.now(),
  });
}

export async function deleteCredential(ctx: RequestContext, key: string): Promise<{ key: string }> {
  const principal = requireOrgRole(ctx, 'admin');
  try {
    await table.delete({
      Key: credentialKey(principal.orgId, key),
      ConditionExpression: 'attribute_exists(pk)',
    });
  } catch (error) {
    if (isConditionFailed(error)) throw new NotFoundError('Credential not found');
    throw error;
  }
  return { key };
}
