import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client';
import { counterKey, counterWrite, nextId } from '#lib/db/counters';
import { pad, tenantPk } from '#lib/db/keys';
import { queryPage } from '#lib/db/paging';
import { claimUnique, releaseUnique, transact, uniqueKey } from '#lib/db/transactions';
import { ConflictError } from '#lib/errors';

describe('nextId', () => {
  it('hands out distinct consecutive ids to concurrent callers', async () => {
    const key = counterKey('widgets', tenantPk('org-counter'));

    const ids = await Promise.all(Array.from({ length: 50 }, () => nextId(key)));

    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
  });

  it('keeps separate sequences per tenant', async () => {
    expect(await nextId(counterKey('widgets', tenantPk('org-a')))).toBe(1);
    expect(await nextId(counterKey('widgets', tenantPk('org-b')))).toBe(1);
    expect(await nextId(counterKey('widgets', tenantPk('org-a')))).toBe(2);
  });
});

describe('transact with counter writes', () => {
  it('lands two counter writes of one item in one transaction as their sum', async () => {
    // Prepare
    const key = { pk: 'T#org-merge#METRICS', sk: 'TOTALS#0' };
    const record = { pk: 'T#org-merge', sk: 'RECORD#1' };

    // Act
    await transact([
      counterWrite({ key, add: { tasks_todo: 1, tokens_used: 5 } }),
      { Put: { Item: record } },
      counterWrite({ key, add: { tasks_todo: 1 }, set: { day: '2025-01-01' } }),
    ]);
    await Promise.all(Array.from({ length: 10 }, () => transact([counterWrite({ key, add: { tasks_todo: -1 } })])));

    // Assess
    const { Item } = await db.send(new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }));
    expect(Item).toEqual({ ...key, tasks_todo: -8, tokens_used: 5, day: '2025-01-01' });
  });
});

describe('transact with unique guards', () => {
  const record = (id: string) => ({
    Put: { TableName: TABLE, Item: { pk: tenantPk('org-u'), sk: `PRODUCT#${id}`, id } },
  });
  const slugTaken = () => new ConflictError('A product with this slug exists');

  it('writes the record and its guard together', async () => {
    await transact([claimUnique('slug#org-u', 'rocket', 'p1'), record('p1')], { 0: slugTaken });

    const guard = await db.send(new GetCommand({ TableName: TABLE, Key: uniqueKey('slug#org-u', 'rocket') }));
    expect(guard.Item?.owner).toBe('p1');
  });

  it('refuses a taken value, case-insensitively, with the domain error and writes nothing', async () => {
    await expect(transact([claimUnique('slug#org-u', 'ROCKET', 'p2'), record('p2')], { 0: slugTaken })).rejects.toThrow(
      slugTaken(),
    );

    const written = await db.send(
      new GetCommand({ TableName: TABLE, Key: { pk: tenantPk('org-u'), sk: 'PRODUCT#p2' } }),
    );
    expect(written.Item).toBeUndefined();
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const attempts = await Promise.allSettled(
      Array.from({ length: 10 }, (_, index) =>
        transact([claimUnique('slug#org-u', 'race', `r${index}`), record(`r${index}`)], { 0: slugTaken }),
      ),
    );
    const won = attempts.filter((attempt) => attempt.status === 'fulfilled');
    const lost = attempts.filter((attempt) => attempt.status === 'rejected');
    expect(won).toHaveLength(1);
    // DynamoDB may cancel a colliding transaction with TransactionConflict instead of a failed
    // condition; either way, every loser is refused and only one record exists.
    expect(lost).toHaveLength(9);
  });

  it('frees a value for reuse once released', async () => {
    await transact([claimUnique('slug#org-u', 'reusable', 'a'), record('a')]);
    await transact([releaseUnique('slug#org-u', 'reusable')]);
    await expect(transact([claimUnique('slug#org-u', 'reusable', 'b'), record('b')])).resolves.toBeUndefined();
  });
});

describe('queryPage', () => {
  const org = tenantPk('org-page');

  it('returns the requested window and the exact total across DynamoDB pages', async () => {
    // Prepare: 120 items of ~10 KB, so the Query spans more than one 1 MB page.
    const filler = 'x'.repeat(10_000);
    await Promise.all(
      Array.from({ length: 120 }, (_, index) =>
        db.send(
          new PutCommand({
            TableName: TABLE,
            Item: { pk: org, sk: `ITEM#${pad(index + 1)}`, n: index + 1, filler },
          }),
        ),
      ),
    );
    const query = {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': org, ':prefix': 'ITEM#' },
    };

    // Act
    const middle = await queryPage<{ n: number }>(query, { limit: 5, offset: 100 });
    const pastEnd = await queryPage(query, { limit: 5, offset: 500 });
    const none = await queryPage(query, { limit: 0, offset: 0 });
    const odd = await queryPage<{ n: number }>(query, { limit: 3, offset: 0 }, (item) => item.n % 2 === 1);

    // Assess
    expect(middle.total).toBe(120);
    expect(middle.items.map((item) => item.n)).toEqual([101, 102, 103, 104, 105]);
    expect(pastEnd).toEqual({ items: [], total: 120 });
    expect(none).toEqual({ items: [], total: 120 });
    expect(odd.total).toBe(60);
    expect(odd.items.map((item) => item.n)).toEqual([1, 3, 5]);
  });
});
