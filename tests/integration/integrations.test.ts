import { describe, expect, it } from 'vitest';
import { handler as credentials } from '#functions/http/credentials';
import { handler as integrations } from '#functions/http/integrations';
import { keys as keyManagement } from '#lib/app/keys';
import * as Credentials from '#lib/credentials/store';
import type { KeyManagement } from '#lib/kernel/ports';
import { contextWith } from '#tests/support/context';
import { call, joinOrganization, newUser } from '#tests/support/identity';

/** A stored value, read with the key service `keys` as the service itself reads it. */
const readCredentialValue = (keys: KeyManagement, orgId: string, key: string) =>
  Credentials.readCredentialValue(contextWith({ keys }), orgId, key);

describe('integrations', () => {
  it('lists the catalogue with every integration not configured for a new organization', async () => {
    const owner = await newUser('catalogue');

    const response = await call(integrations, 'GET', '/integrations', { token: owner.token });

    expect(response.status).toBe(200);
    expect(response.body.data.map((integration: { id: string }) => integration.id)).toEqual([
      'git',
      'payments',
      'deploy',
      'chat',
      'llm',
      'email',
    ]);
    expect(response.body.data.every((integration: { status: string }) => integration.status === 'not_configured')).toBe(
      true,
    );
    expect(response.body.meta).toEqual({ total: 6, limit: 6, offset: 0 });
  });

  it('stores configured fields in the credential store, under the names the service reads', async () => {
    const owner = await newUser('configurer');

    const configured = await call(integrations, 'POST', '/integrations/git/configure', {
      token: owner.token,
      body: { fields: { access_token: 'ghp_token_value', webhook_secret: 'hook-secret' } },
    });

    expect(configured.status).toBe(200);
    expect(configured.body.data).toMatchObject({ id: 'git', status: 'configured' });
    expect(JSON.stringify(configured.body)).not.toMatch(/ghp_token_value|hook-secret/);
    expect(await readCredentialValue(keyManagement(), owner.orgId, 'webhook.git.secret')).toBe('hook-secret');
    expect(await readCredentialValue(keyManagement(), owner.orgId, 'integration.git.access_token')).toBe(
      'ghp_token_value',
    );
    const listed = await call(credentials, 'GET', '/credentials', { token: owner.token });
    expect(listed.body.data.map((credential: { key: string }) => credential.key).sort()).toEqual([
      'integration.git.access_token',
      'webhook.git.secret',
    ]);
  });

  it('reports partial configuration and accepts the missing fields later', async () => {
    const owner = await newUser('partial');
    await call(credentials, 'POST', '/credentials', {
      token: owner.token,
      body: { key: 'integration.llm.api_key', value: 'sk-x' },
    });

    const partial = await call(integrations, 'GET', '/integrations/llm/status', { token: owner.token });
    const completed = await call(integrations, 'POST', '/integrations/llm/configure', {
      token: owner.token,
      body: { fields: { base_url: 'https://llm.example.com/v1' } },
    });

    expect(partial.body.data.status).toBe('partially_configured');
    expect(partial.body.data.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'api_key', configured: true }),
        expect.objectContaining({ name: 'base_url', configured: false }),
      ]),
    );
    expect(completed.body.data.status).toBe('configured');
  });

  it('refuses missing required fields, unknown fields and malformed values together, writing nothing', async () => {
    const owner = await newUser('strict');

    const response = await call(integrations, 'POST', '/integrations/llm/configure', {
      token: owner.token,
      body: { fields: { base_url: 'not a url', colour: 'blue' } },
    });
    const after = await call(integrations, 'GET', '/integrations/llm/status', { token: owner.token });

    expect(response.status).toBe(400);
    expect(response.body.error.details.map((detail: { path: string }) => detail.path).sort()).toEqual([
      'body.fields.api_key',
      'body.fields.base_url',
      'body.fields.colour',
    ]);
    expect(after.body.data.status).toBe('not_configured');
  });

  it('answers 404 for an unknown integration and 403 when a member configures', async () => {
    const owner = await newUser('gate');
    const member = await newUser('helper');
    await joinOrganization(member, owner.orgId, 'member');

    const unknown = await call(integrations, 'GET', '/integrations/fax/status', { token: owner.token });
    const forbidden = await call(integrations, 'POST', '/integrations/email/configure', {
      token: member.token,
      headers: { 'x-organization-id': owner.orgId },
      body: { fields: { from_address: 'ops@example.com' } },
    });

    expect(unknown.status).toBe(404);
    expect(forbidden.status).toBe(403);
  });
});
