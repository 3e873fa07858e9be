import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { SCOPES } from '#lib/identity/roles';

/** Organization API keys: the `api-keys` function. */

const group = 'api-keys';
const tags = ['API keys'];

/** How long a rotated key keeps working when the caller names no grace. */
export const DEFAULT_GRACE_HOURS = 24;
const MAX_GRACE_HOURS = 720;

const resourceId = (name: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, `${name} must be 1 to 64 letters, digits, _ or -`)
    .meta({ description: name });

const orgParams = z.object({ orgId: resourceId('orgId') });
const keyParams = orgParams.extend({ keyId: resourceId('keyId') });

const WHO_MAY =
  'Owners and admins of the organization (and instance admins) may manage its keys, reading included; so may an ' +
  'API key of the same organization with the `admin` scope. An organization the caller is not in answers 404; ' +
  'a member or viewer gets 403.';

const name = z.string().trim().min(1).max(100);
const description = z.string().trim().max(500).nullable();
const scopes = z
  .array(z.enum(SCOPES))
  .min(1)
  .max(10)
  .meta({
    description:
      '`read` allows GET routes, `write` every route that is not admin-only (and implies `read`), `admin` ' +
      'everything (and implies both). Duplicates are dropped.',
  });

export const ApiKeyRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    scopes: z.array(z.enum(SCOPES)),
    active: z.boolean().meta({ description: 'false after PATCH active:false, revoke or delete' }),
    masked_key: z.string().meta({ example: 'osk_live_…AbCd' }),
    created_at: z.string(),
    updated_at: z.string(),
    expires_at: z.string().nullable().meta({ description: 'The key stops working at this instant' }),
    revoked_at: z.string().nullable(),
    rotated_at: z.string().nullable().meta({ description: 'Last rotate or roll' }),
    created_by: z.number().int().nullable().meta({ description: 'The user who created it; null for a key' }),
    grace_until: z
      .string()
      .nullable()
      .meta({ description: 'After a rotation: the previous key works until this instant' }),
  })
  .meta({ id: 'ApiKey', description: 'An organization API key, masked. The raw key is never shown again.' });

export const ApiKeyWithSecret = ApiKeyRecord.extend({
  key: z.string().meta({
    description:
      'The raw key: `osk_live_`, the organization’s id without `org_`, then 43 random characters (keys made ' +
      'before keys named their organization have the 43 characters alone and work as before). Shown only ' +
      'in this response.',
  }),
}).meta({ id: 'ApiKeyWithSecret' });

export const ApiKeyUseRecord = z
  .object({
    method: z.string(),
    route: z.string().meta({ description: 'The route template, e.g. /tasks/{id}' }),
    status: z.number().int(),
    at: z.string(),
  })
  .meta({ id: 'ApiKeyUse' });

export const listApiKeys = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/organizations/{orgId}/api-keys',
  auth: 'bearer',
  summary: 'List the organization’s API keys (masked)',
  description: `Oldest first; deleted keys are not listed. ${WHO_MAY}`,
  params: orgParams,
  query: pagingQuery,
  envelope: 'list',
  response: ApiKeyRecord,
});

export const createApiKey = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/organizations/{orgId}/api-keys',
  auth: 'bearer',
  summary: 'Create an API key (the raw key is returned once)',
  description: [
    '`scopes` defaults to `["read"]`. `expires_at` (ISO 8601 with a time zone) must lie in the future.',
    WHO_MAY,
  ].join(' '),
  params: orgParams,
  body: z.object({
    name,
    description: description.optional(),
    scopes: scopes.optional(),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  }),
  response: ApiKeyWithSecret,
  status: 201,
});

export const getApiKey = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/organizations/{orgId}/api-keys/{keyId}',
  auth: 'bearer',
  summary: 'One API key (masked)',
  description: `A deleted key answers 404. ${WHO_MAY}`,
  params: keyParams,
  response: ApiKeyRecord,
});

export const updateApiKey = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/organizations/{orgId}/api-keys/{keyId}',
  auth: 'bearer',
  summary: 'Rename, rescope, deactivate or reactivate an API key',
  description:
    'At least one field. A change of scopes or `active` applies from the next request. A revoked key cannot be ' +
    `activated again (409). ${WHO_MAY}`,
  params: keyParams,
  body: z
    .object({
      name: name.optional(),
      description: description.optional(),
      scopes: scopes.optional(),
      active: z.boolean().optional(),
    })
    .refine((body) => Object.keys(body).length > 0, 'name at least one of name, description, scopes, active'),
  response: ApiKeyRecord,
  errors: [409],
});

export const deleteApiKey = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/organizations/{orgId}/api-keys/{keyId}',
  auth: 'bearer',
  summary: 'Delete an API key (soft delete; the key stops working at once)',
  description: WHO_MAY,
  params: keyParams,
  envelope: 'deleted',
  response: z.object({ id: z.string(), deleted_at: z.string() }),
});

export const revokeApiKey = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/organizations/{orgId}/api-keys/{keyId}/revoke',
  auth: 'bearer',
  summary: 'Revoke an API key (unusable from the next request)',
  description:
    'Also ends the grace of a previous key still in its rotation grace. Revoking a revoked key answers 200 and ' +
    `changes nothing. ${WHO_MAY}`,
  params: keyParams,
  response: ApiKeyRecord,
});

export const rotateApiKey = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/organizations/{orgId}/api-keys/{keyId}/rotate',
  auth: 'bearer',
  summary: 'Rotate an API key: a new raw key, the old one valid for a grace period',
  description:
    `\`grace_hours\` (0 to ${MAX_GRACE_HOURS}, default ${DEFAULT_GRACE_HOURS}): the old key keeps working until ` +
    'then (0: dies at once, as with roll). Only one previous key is kept: rotating again during a grace ends the ' +
    `older key's grace at once. A revoked, inactive or expired key answers 409. ${WHO_MAY}`,
  params: keyParams,
  body: z
    .object({ grace_hours: z.number().int().min(0).max(MAX_GRACE_HOURS).optional() })
    .optional()
    .meta({ description: 'Optional' }),
  response: ApiKeyWithSecret,
  errors: [409],
});

export const rollApiKey = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/organizations/{orgId}/api-keys/{keyId}/roll',
  auth: 'bearer',
  summary: 'Roll an API key: a new raw key, the old one invalid at once',
  description: `Also ends the grace of a previous key. A revoked, inactive or expired key answers 409. ${WHO_MAY}`,
  params: keyParams,
  response: ApiKeyWithSecret,
  errors: [409],
});

export const listApiKeyUsage = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/organizations/{orgId}/api-keys/{keyId}/usage',
  auth: 'bearer',
  summary: 'The usage log of an API key, newest first',
  description: `One record per authenticated request made with the key (any of its secrets), kept 90 days. ${WHO_MAY}`,
  params: keyParams,
  query: pagingQuery,
  envelope: 'list',
  response: ApiKeyUseRecord,
});
