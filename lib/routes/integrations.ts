import * as z from 'zod';
import { defineRoute } from '#lib/http/route';

/** The integration catalogue and each integration's state in the organization: the `integrations` function. */

const group = 'integrations';
const tags = ['Integrations'];

export const IntegrationStatus = z
  .object({
    id: z.string(),
    name: z.string(),
    category: z.string(),
    description: z.string(),
    status: z.enum(['configured', 'partially_configured', 'not_configured']),
    fields: z.array(
      z.object({
        name: z.string(),
        label: z.string(),
        required: z.boolean(),
        format: z.enum(['text', 'url', 'email', 'secret']),
        configured: z.boolean(),
      }),
    ),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'Integration', description: 'An integration with its status; field values are never shown.' });

const params = z.object({ id: z.string().regex(/^[a-z0-9-]{1,32}$/, 'is not an integration id') });

export const listIntegrations = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/integrations',
  auth: 'bearer',
  summary: 'The integration catalogue with each integration’s status in the organization',
  description: 'Not paged: the catalogue is small and fixed. `meta` gives the usual totals.',
  envelope: 'list',
  response: IntegrationStatus,
});

export const getIntegrationStatus = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/integrations/{id}/status',
  auth: 'bearer',
  summary: 'One integration’s status',
  params,
  response: IntegrationStatus,
});

export const configureIntegration = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/integrations/{id}/configure',
  auth: 'bearer',
  summary: 'Store an integration’s fields in the credential store (organization admin)',
  description:
    'Each field is sealed as a credential (`integration.<id>.<field>`, or the well-known name the service ' +
    'reads, e.g. `webhook.git.secret`). Unknown fields, malformed values and required fields that are neither ' +
    'given nor stored already answer 400 together, and nothing is written. A `url` field (the llm ' +
    'integration’s `base_url`) is held to the rules of outbound webhook URLs: https, no user:password, and, ' +
    'unless the deployment allows private targets, no loopback, private, link-local or other non-public ' +
    'address, no `localhost` and no name of a private network; its host is resolved and judged again ' +
    'before every call.',
  params,
  body: z.object({ fields: z.record(z.string(), z.string().min(1).max(16_384)) }),
  response: IntegrationStatus,
});
