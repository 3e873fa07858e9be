import { describe, expect, it } from 'vitest';
import { counterWrite, mergeCounterWrites, shardOf } from '#lib/db/counters';
import type { TransactItem } from '#lib/db/transactions';

const key = { pk: 'T#o#METRICS', sk: 'TOTALS#0' };
const other = { pk: 'T#o#METRICS', sk: 'TOTALS#1' };
const put: TransactItem = { Put: { Item: { pk: 'T#o', sk: 'TASK#1' } }, reason: 'stale' };

describe('counterWrite', () => {
  it('adds each number and sets each value given, naming every attribute through placeholders', () => {
    // Act
    const write = counterWrite({ key, add: { tasks_todo: 1, 'tasks#done': -1 }, set: { expires_at: 99 } });

    // Assess
    expect(write).toEqual({
      Update: {
        Key: key,
        UpdateExpression: 'SET #s0 = :s0 ADD #a0 :a0, #a1 :a1',
        ExpressionAttributeNames: { '#a0': 'tasks_todo', '#a1': 'tasks#done', '#s0': 'expires_at' },
        ExpressionAttributeValues: { ':a0': 1, ':a1': -1, ':s0': 99 },
      },
      counter: { key, add: { tasks_todo: 1, 'tasks#done': -1 }, set: { expires_at: 99 } },
    });
  });
});

describe('mergeCounterWrites', () => {
  it('merges the counter writes of one item into one, summing the adds, in the place of the first', () => {
    // Prepare
    const items = [
      counterWrite({ key, add: { tasks_todo: 1 } }),
      put,
      counterWrite({ key: other, add: { tasks_todo: 5 } }),
      counterWrite({ key, add: { tasks_todo: -1, tokens_used: 40 }, set: { day: 'd' } }),
    ];

    // Act
    const merged = mergeCounterWrites(items);

    // Assess
    expect(merged.items).toEqual([
      counterWrite({ key, add: { tasks_todo: 0, tokens_used: 40 }, set: { day: 'd' } }),
      put,
      items[2],
    ]);
    expect(merged.origins).toEqual([0, 1, 2]);
  });

  it('leaves a transaction without two writes of one counter item as it is', () => {
    const items = [put, counterWrite({ key, add: { a: 1 } }), counterWrite({ key: other, add: { a: 1 } })];
    expect(mergeCounterWrites(items)).toEqual({ items, origins: [0, 1, 2] });
  });

  it('maps the writes after a merged one to their first positions', () => {
    const items = [counterWrite({ key, add: { a: 1 } }), counterWrite({ key, add: { a: 1 } }), put];
    expect(mergeCounterWrites(items).origins).toEqual([0, 2]);
  });
});

describe('shardOf', () => {
  it('picks every shard of the range and none outside it', () => {
    const seen = new Set(Array.from({ length: 400 }, () => shardOf(4)));
    expect([...seen].sort()).toEqual([0, 1, 2, 3]);
  });
});
