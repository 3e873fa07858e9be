import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';

/** The organization's encrypted credential store: the `credentials` function. */

const group = 'credentials';
const tags = ['Credentials'];

export const credentialName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, 'letters, digits and . _ : / - only, at most 128 characters');

export const CredentialRecord = z
  .object({
    key: z.string(),
    description: z.string().nullable(),
    key_id: z.string().meta({ description: 'The master key that wrapped this credential’s data key' }),
    created_at: z.string(),
    updated_at: z.string(),
    updated_by: z.string().meta({ description: '`user:<id>` or `api_key:<id>`' }),
  })
  .meta({ id: 'Credential', description: 'A credential without its value.' });

export const listCredentials = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/credentials',
  auth: 'bearer',
  summary: 'List credentials (names, descriptions and timestamps; never values)',
  query: pagingQuery,
  envelope: 'list',
  response: CredentialRecord,
});

export const putCredential = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/credentials',
  auth: 'bearer',
  summary: 'Create or update a credential (organization admin)',
  description:
    'Answers 201 whether it created or replaced the value (`meta.created` tells which). Each write seals the ' +
    'value with a fresh data key (AES-256-GCM envelope encryption). The value is never returned here. ' +
    'Organization admins and owners, instance admins and API keys with the `admin` scope may write.',
  body: z.object({
    key: credentialName,
    value: z.string().min(1).max(16_384),
    description: z.string().max(500).nullable().optional(),
  }),
  response: CredentialRecord,
  status: 201,
});

export const getCredential = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/credentials/{key}',
  auth: 'bearer',
  permission: 'write',
  summary: 'A credential with its decrypted value',
  description:
    'Needs write access (viewers and read-scoped keys cannot read secret values). Every read is written to the ' +
    'activity log (who, which key, when; never the value). 500 CREDENTIAL_DECRYPTION_FAILED when the stored ' +
    'ciphertext or its key does not fit.',
  params: z.object({ key: credentialName }),
  response: CredentialRecord.extend({ value: z.string() }).meta({ id: 'CredentialWithValue' }),
  errors: [500],
});

export const deleteCredential = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/credentials/{key}',
  auth: 'bearer',
  summary: 'Delete a credential (organization admin)',
  params: z.object({ key: credentialName }),
  envelope: 'deleted',
  response: z.object({ key: z.string() }),
});
