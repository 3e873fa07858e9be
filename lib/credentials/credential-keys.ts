import type { Envelope } from '#lib/credentials/envelope';
import { type TableKey, tenantPk } from '#lib/db/keys';
import type { Principal } from '#lib/kernel/context';

/**
 * Where credentials live in the table (access patterns: lib/credentials/credential-records.ts).
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | credential | `T#<org>` | `CRED#<key>` | the value sealed by envelope encryption; never in a list or log |
 */
export const credentialKeys = {
  byKey: (orgId: string, key: string): TableKey => ({ pk: tenantPk(orgId), sk: `CRED#${key}` }),
  prefix: 'CRED#',
};

export interface CredentialItem extends TableKey {
  key: string;
  description: string | null;
  envelope: Envelope;
  created_at: string;
  updated_at: string;
  /** `user:<id>`, `api_key:<id>` or `system`. */
  updated_by: string;
}

/** A credential as the API shows it: never the value, only the id of the master key that sealed it. */
export type Credential = Omit<CredentialItem, 'pk' | 'sk' | 'envelope'> & { key_id: string };

export const toCredential = (item: CredentialItem): Credential => ({
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
