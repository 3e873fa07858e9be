import { type CredentialItem, credentialKeys } from '#lib/credentials/credential-keys';
import type { Envelope } from '#lib/credentials/envelope';
import { itemExists } from '#lib/db/conditions';
import { tenantPk } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';

/** The access patterns of credentials (keys and item types: lib/credentials/credential-keys.ts). */

const inStore = (orgId: string) => ({
  KeyConditionExpression: 'pk = :pk AND begins_with(sk, :cred)',
  ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':cred': credentialKeys.prefix },
});

export async function getCredentialItem(input: { orgId: string; key: string }): Promise<CredentialItem | undefined> {
  const { Item } = await table.get({ Key: credentialKeys.byKey(input.orgId, input.key) });
  return Item as CredentialItem | undefined;
}

/**
 * Creates a credential or replaces its value in one UpdateItem, keeping its creation time (and its
 * description unless a new one is given). Answers the item as it was before (none: it is new).
 */
export async function upsertCredentialItem(input: {
  orgId: string;
  key: string;
  envelope: Envelope;
  description?: string | null;
  actor: string;
  at: string;
}): Promise<CredentialItem | undefined> {
  const keepDescription = input.description === undefined;
  const result = await table.update({
    Key: credentialKeys.byKey(input.orgId, input.key),
    UpdateExpression: [
      'SET #key = :key, envelope = :envelope, updated_at = :at, updated_by = :actor',
      'created_at = if_not_exists(created_at, :at)',
      keepDescription ? 'description = if_not_exists(description, :none)' : 'description = :description',
    ].join(', '),
    ExpressionAttributeNames: { '#key': 'key' },
    ExpressionAttributeValues: {
      ':key': input.key,
      ':envelope': input.envelope,
      ':at': input.at,
      ':actor': input.actor,
      ...(keepDescription ? { ':none': null } : { ':description': input.description }),
    },
    ReturnValues: 'ALL_OLD',
  });
  return result.Attributes as CredentialItem | undefined;
}

/** A page of the organization's credentials, without their sealed values. */
export async function listCredentialItems(input: { orgId: string } & PageRequest): Promise<Page<CredentialItem>> {
  return queryPage<CredentialItem>(
    {
      ...inStore(input.orgId),
      ProjectionExpression: '#key, description, envelope.key_id, created_at, updated_at, updated_by',
      ExpressionAttributeNames: { '#key': 'key' },
    },
    input,
  );
}

/** The names of the organization's credentials with their update times, read once (no values). */
export async function credentialUpdateTimes(orgId: string): Promise<Map<string, string>> {
  const stored = new Map<string, string>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      ...inStore(orgId),
      ProjectionExpression: '#key, updated_at',
      ExpressionAttributeNames: { '#key': 'key' },
      ExclusiveStartKey: startKey,
    });
    for (const item of page.Items ?? []) stored.set(item.key as string, item.updated_at as string);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return stored;
}

/** Deletes a credential; refused with reason `missing` when there is none. */
export async function deleteCredentialItem(input: { orgId: string; key: string }): Promise<void> {
  await table.delete({
    Key: credentialKeys.byKey(input.orgId, input.key),
    ConditionExpression: itemExists,
    reason: 'missing',
  });
}
