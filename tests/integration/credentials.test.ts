import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler as credentials } from '#functions/http/credentials';
import { credentialKeys } from '#lib/credentials/credential-keys';
import { db, TABLE } from '#lib/db/client';
import { logger } from '#lib/logger';
import { activityOf } from '#tests/support/activity';
import { call, joinOrganization, newUser } from '#tests/support/identity';
import { captureLogs } from '#tests/support/logs';

afterEach(() => {
  vi.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

describe('the credential store over its endpoints', () => {
  it('creates, lists without values, reads with the value, replaces and deletes a credential', async () => {
    // Prepare
    const owner = await newUser('vault');

    // Act
    const created = await call(credentials, 'POST', '/credentials', {
      token: owner.token,
      body: { key: 'llm.api_key', value: 'sk-first-secret', description: 'LLM key' },
    });
    const replaced = await call(credentials, 'POST', '/credentials', {
      token: owner.token,
      body: { key: 'llm.api_key', value: 'sk-second-secret' },
    });
    const listed = await call(credentials, 'GET', '/credentials', { token: owner.token });
    const read = await call(credentials, 'GET', '/credentials/llm.api_key', { token: owner.token });
    const removed = await call(credentials, 'DELETE', '/credentials/llm.api_key', { token: owner.token });
    const gone = await call(credentials, 'GET', '/credentials/llm.api_key', { token: owner.token });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      data: {
        key: 'llm.api_key',
        description: 'LLM key',
        key_id: expect.stringMatching(/^local:/),
        created_at: expect.any(String),
        updated_at: expect.any(String),
        updated_by: `user:${owner.id}`,
      },
      meta: { created: true },
    });
    expect(replaced.status).toBe(201);
    expect(replaced.body.meta).toEqual({ created: false });
    expect(replaced.body.data.description).toBe('LLM key');
    expect(replaced.body.data.created_at).toBe(created.body.data.created_at);
    expect(listed.body.data).toEqual([expect.objectContaining({ key: 'llm.api_key' })]);
    expect(JSON.stringify([created.body, replaced.body, listed.body])).not.toMatch(
      /sk-first|sk-second|ciphertext|wrapped/,
    );
    expect(read.body.data).toMatchObject({ key: 'llm.api_key', value: 'sk-second-secret' });
    expect(removed.body).toEqual({ data: { key: 'llm.api_key' }, meta: { deleted: true } });
    expect(gone.status).toBe(404);
  });

  it('writes every read of a value to the activity log, without the value', async () => {
    const owner = await newUser('audited');
    await call(credentials, 'POST', '/credentials', {
      token: owner.token,
      body: { key: 'k1', value: 'v-hidden' },
    });

    await call(credentials, 'GET', '/credentials/k1', { token: owner.token });

    const log = (await activityOf(owner.orgId)).filter((entry) => entry.entity_type === 'credential');
    expect(log).toEqual([
      expect.objectContaining({
        action: 'credential.read',
        actor_type: 'user',
        actor_id: `user:${owner.id}`,
        entity_type: 'credential',
        entity_id: 'k1',
      }),
    ]);
    expect(JSON.stringify(await activityOf(owner.orgId))).not.toContain('v-hidden');
  });

  it('answers 500 CREDENTIAL_DECRYPTION_FAILED when the stored ciphertext was tampered with', async () => {
    const owner = await newUser('tampered');
    await call(credentials, 'POST', '/credentials', {
      token: owner.token,
      body: { key: 'k2', value: 'value' },
    });
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: credentialKeys.byKey(owner.orgId, 'k2'),
        UpdateExpression: 'SET envelope.ciphertext = :forged',
        ExpressionAttributeValues: { ':forged': Buffer.from('forged bytes').toString('base64') },
      }),
    );

    const response = await call(credentials, 'GET', '/credentials/k2', { token: owner.token });

    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      error: {
        code: 'CREDENTIAL_DECRYPTION_FAILED',
        message: 'The credential could not be decrypted',
        details: [],
      },
    });
  });

  it('lets members read values but only admins write or delete; viewers read nothing secret', async () => {
    // Prepare
    const owner = await newUser('boss');
    const member = await newUser('staff');
    const viewer = await newUser('looker');
    await joinOrganization(member, owner.orgId, 'member');
    await joinOrganization(viewer, owner.orgId, 'viewer');
    await call(credentials, 'POST', '/credentials', {
      token: owner.token,
      body: { key: 'shared', value: 's' },
    });
    const as = (token: string) => ({ token, headers: { 'x-organization-id': owner.orgId } });

    // Act / Assess
    expect((await call(credentials, 'GET', '/credentials/shared', as(member.token))).status).toBe(200);
    expect(
      (
        await call(credentials, 'POST', '/credentials', {
          ...as(member.token),
          body: { key: 'x', value: 'y' },
        })
      ).status,
    ).toBe(403);
    expect((await call(credentials, 'DELETE', '/credentials/shared', as(member.token))).status).toBe(403);
    expect((await call(credentials, 'GET', '/credentials', as(viewer.token))).status).toBe(200);
    expect((await call(credentials, 'GET', '/credentials/shared', as(viewer.token))).status).toBe(403);
  });

  it('keeps each organization’s credentials to itself', async () => {
    const a = await newUser('tenant-a');
    const b = await newUser('tenant-b');
    await call(credentials, 'POST', '/credentials', {
      token: a.token,
      body: { key: 'mine', value: 'a-secret' },
    });

    expect((await call(credentials, 'GET', '/credentials/mine', { token: b.token })).status).toBe(404);
    expect((await call(credentials, 'GET', '/credentials', { token: b.token })).body.data).toEqual([]);
    expect((await call(credentials, 'DELETE', '/credentials/mine', { token: b.token })).status).toBe(404);
  });

  it.each([
    [{ key: '', value: 'v' }, 'body.key'],
    [{ key: 'bad key!', value: 'v' }, 'body.key'],
    [{ key: 'ok', value: '' }, 'body.value'],
  ])('answers 400 for %o', async (body, path) => {
    const owner = await newUser('invalid');
    const response = await call(credentials, 'POST', '/credentials', { token: owner.token, body });
    expect(response.status).toBe(400);
    expect(response.body.error.details[0].path).toBe(path);
  });

  it('never writes a value into a log line', async () => {
    const lines = captureLogs('DEBUG');
    const owner = await newUser('silent');

    await call(credentials, 'POST', '/credentials', {
      token: owner.token,
      body: { key: 'k', value: 'never-logged-value' },
    });
    await call(credentials, 'GET', '/credentials/k', { token: owner.token });

    expect(lines.join('')).not.toContain('never-logged-value');
  });
});
