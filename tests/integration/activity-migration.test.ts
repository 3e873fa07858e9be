import { beforeAll, describe, expect, it } from 'vitest';
import { handler as activityLog } from '#functions/http/activity-log';
import { moveAllLegacyActivity, moveLegacyActivity } from '#lib/activity/activity-migration';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { call, newUser, type TestUser } from '#tests/support/identity';

/**
 * The move of activity entries written in the organization's partition (before the log had partitions
 * of its own) into the log: listed and counted as if written there, the old items gone, twice safe.
 */

beforeAll(async () => {
  await newUser('instanceadmin');
});

const DAY = 86_400_000;

/** An entry as the service wrote it before: `T#<org>` / `ACTIVITY#<at>#<nonce>`, no TTL, no index keys. */
async function legacyEntry(orgId: string, at: Date, nonce: string, fields: Record<string, unknown>) {
  const iso = at.toISOString();
  await table.put({
    Item: { pk: tenantPk(orgId), sk: `ACTIVITY#${iso}#${nonce}`, id: `${iso}#${nonce}`, ...fields, created_at: iso },
  });
}

async function legacyLeft(orgId: string): Promise<number> {
  const { Items = [] } = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': 'ACTIVITY#' },
    ConsistentRead: true,
  });
  return Items.length;
}

const list = (user: TestUser, query: Record<string, string> = {}) =>
  call(activityLog, 'GET', '/activity-log', { token: user.token, query });

describe('moving legacy activity entries', () => {
  it('moves recent entries into the log with their counts, drops expired ones, and moves nothing twice', async () => {
    // Prepare
    const user = await newUser('legacy');
    const now = new Date();
    await legacyEntry(user.orgId, new Date(now.getTime() - 2 * DAY), 'aaaaaaaa', {
      actor_type: 'user',
      actor_id: `user:${user.id}`,
      action: 'product.created',
      entity_type: 'product',
      entity_id: 'widget',
      metadata: { id: 1 },
    });
    await legacyEntry(user.orgId, new Date(now.getTime() - 120 * DAY), 'bbbbbbbb', {
      actor_type: 'agent',
      actor_id: 'agent:old',
      action: 'task.claimed',
    });

    // Act
    const first = await moveLegacyActivity(user.orgId, now);
    const again = await moveAllLegacyActivity(now);
    const moved = await list(user, { action: 'product.created' });
    const stats = await call(activityLog, 'GET', '/activity-log/stats', { token: user.token });

    // Assess
    expect(first).toEqual({ moved: 1, expired: 1 });
    expect(again).toMatchObject({ moved: 0, expired: 0 });
    expect(await legacyLeft(user.orgId)).toBe(0);
    expect(moved.body).toEqual({
      data: [
        {
          id: 'act_aaaaaaaa',
          actor_type: 'user',
          actor_id: `user:${user.id}`,
          action: 'product.created',
          entity_type: 'product',
          entity_id: 'widget',
          metadata: { id: 1 },
          recorded_by: null,
          created_at: new Date(now.getTime() - 2 * DAY).toISOString(),
        },
      ],
      meta: { total: 1, limit: 50, offset: 0 },
    });
    expect((await list(user, { actor_id: 'agent:old' })).body.meta.total).toBe(0);
    expect(stats.body.data.last_7d.by_action).toEqual({ 'product.created': 1, 'user.login': 1 });
  });
});
