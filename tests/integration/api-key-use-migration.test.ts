import { beforeAll, describe, expect, it } from 'vitest';
import { handler as apiKeys } from '#functions/http/api-keys';
import { handler as auth } from '#functions/http/auth';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { moveAllLegacyApiKeyUses, moveLegacyApiKeyUses } from '#lib/identity/api-key-use-migration';
import { epochSeconds } from '#lib/identity/ttl';
import { call, newUser, type TestUser } from '#tests/support/identity';

/**
 * API key uses live in a partition per key, never in the organization's own: new uses are written
 * there, and the uses an installation wrote in `T#<org>` before are moved there, listed as before, the
 * old items gone, twice safe.
 */

beforeAll(async () => {
  await newUser('instanceadmin');
});

const DAY = 86_400_000;

async function newKey(owner: TestUser): Promise<{ id: string; key: string }> {
  const created = await call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
    token: owner.token,
    body: { name: 'migrated', scopes: ['read'] },
  });
  return { id: created.body.data.id, key: created.body.data.key };
}

/** A use as the service wrote it before: `T#<org>` / `APIKEYUSE#<key>#<at>#<nonce>`. */
async function legacyUse(orgId: string, keyId: string, at: Date, nonce: string, status: number) {
  const iso = at.toISOString();
  await table.put({
    Item: {
      pk: tenantPk(orgId),
      sk: `APIKEYUSE#${keyId}#${iso}#${nonce}`,
      key_id: keyId,
      method: 'GET',
      route: '/tasks',
      status,
      at: iso,
      expires_at: epochSeconds(at) + 90 * 86_400,
    },
  });
}

async function usesInOrgPartition(orgId: string): Promise<number> {
  const { Items = [] } = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': 'APIKEYUSE#' },
    ConsistentRead: true,
  });
  return Items.length;
}

const usageOf = (owner: TestUser, keyId: string) =>
  call(apiKeys, 'GET', `/organizations/${owner.orgId}/api-keys/${keyId}/usage`, { token: owner.token });

describe('API key uses', () => {
  it('are written in the key’s own partition, not the organization’s', async () => {
    // Prepare
    const owner = await newUser('fresh');
    const { id, key } = await newKey(owner);

    // Act
    await call(auth, 'GET', '/auth/me', { token: key });
    const usage = await usageOf(owner, id);

    // Assess
    expect(usage.body.data).toEqual([{ method: 'GET', route: '/auth/me', status: 200, at: expect.any(String) }]);
    expect(await usesInOrgPartition(owner.orgId)).toBe(0);
  });

  it('written before are moved into the key’s partition and listed as before; expired ones are dropped', async () => {
    // Prepare
    const owner = await newUser('legacy');
    const { id } = await newKey(owner);
    const now = new Date();
    await legacyUse(owner.orgId, id, new Date(now.getTime() - 2 * DAY), 'aaaaaa', 200);
    await legacyUse(owner.orgId, id, new Date(now.getTime() - DAY), 'bbbbbb', 404);
    await legacyUse(owner.orgId, id, new Date(now.getTime() - 100 * DAY), 'cccccc', 200);

    // Act
    const first = await moveLegacyApiKeyUses(owner.orgId, now);
    const again = await moveAllLegacyApiKeyUses(now);
    const usage = await usageOf(owner, id);

    // Assess
    expect(first).toEqual({ moved: 2, expired: 1 });
    expect(again).toMatchObject({ moved: 0, expired: 0 });
    expect(await usesInOrgPartition(owner.orgId)).toBe(0);
    expect(usage.body).toEqual({
      data: [
        { method: 'GET', route: '/tasks', status: 404, at: new Date(now.getTime() - DAY).toISOString() },
        { method: 'GET', route: '/tasks', status: 200, at: new Date(now.getTime() - 2 * DAY).toISOString() },
      ],
      meta: { total: 2, limit: 50, offset: 0 },
    });
  });
});
