import { describe, expect, it } from 'vitest';
import { type Item, integrityProblems } from '#tests/support/integrity';

/**
 * The table check the concurrency and fault suites end with must see a half-written record: each case
 * here is a table a write could leave behind if it landed in part.
 */
const org = 'org_a';
const T = `T#${org}`;
const user: Item = {
  pk: 'USER#1',
  sk: 'USER',
  id: 1,
  email: 'ada@example.com',
  username: 'ada',
  personal_org_id: org,
};
const organization: Item = {
  pk: T,
  sk: 'ORG',
  id: org,
  slug: 'ada',
  owner_id: 1,
  personal: true,
  counted: true,
  member_count: 1,
};
const whole: Item[] = [
  user,
  { pk: 'UNIQUE#email#ada@example.com', sk: 'UNIQUE', owner: '1' },
  { pk: 'UNIQUE#username#ada', sk: 'UNIQUE', owner: '1' },
  organization,
  { pk: 'UNIQUE#org-slug#ada', sk: 'UNIQUE', owner: org },
  { pk: T, sk: 'MEMBER#000000000001' },
  { pk: 'METRICS', sk: 'TOTALS#3', organizations: 1 },
  { pk: T, sk: 'PRODUCT#rocket', id: 7, slug: 'rocket', task_counts: { todo: 0 } },
  { pk: T, sk: 'PRODUCTID#000000000007', slug: 'rocket' },
  { pk: `${T}#METRICS`, sk: 'TOTALS#0', products: 1, tokens_used: 100 },
  { pk: T, sk: 'TOKENS', balance: 900 },
  { pk: T, sk: 'TOKENTX#2025-01-01T00:00:00.000Z#a', type: 'signup_bonus', amount: 1000 },
  { pk: T, sk: 'TOKENTX#2025-01-01T00:00:01.000Z#b', type: 'consume', amount: -100 },
];

const without = (sk: string, pk = T) => whole.filter((item) => !(item.pk === pk && item.sk === sk));
const changed = (sk: string, change: Item) =>
  whole.map((item) => (item.pk === T && item.sk === sk ? { ...item, ...change } : item));

describe('integrityProblems', () => {
  it('finds nothing wrong in a table whose writes all landed whole', () => {
    expect(integrityProblems(whole)).toEqual([]);
  });

  it('names a record without its guard, and a guard without its record', () => {
    expect(integrityProblems(without('PRODUCTID#000000000007'))).toEqual([
      `${org} PRODUCT#rocket has no guard or pointer of its own`,
    ]);
    expect(integrityProblems(without('UNIQUE', 'UNIQUE#email#ada@example.com'))).toEqual([
      "user 1's email guard owner: undefined, expected 1",
    ]);
    expect(integrityProblems([...whole, { pk: 'UNIQUE#org-slug#gone', sk: 'UNIQUE', owner: 'org_b' }])).toEqual([
      'UNIQUE#org-slug#gone names no organization that holds it',
    ]);
  });

  it('names a count that differs from what it counts', () => {
    expect(integrityProblems(without('PRODUCT#rocket'))).toEqual([
      `${org} PRODUCTID#000000000007 names no record that holds it`,
      `${org} products total: 1, expected 0`,
    ]);
    expect(integrityProblems(changed('ORG', { member_count: 2 }))).toEqual([`${org} member_count: 2, expected 1`]);
  });

  it('names a balance its ledger does not explain', () => {
    expect(integrityProblems(changed('TOKENS', { balance: 800 }))).toEqual([`${org} token balance: 800, expected 900`]);
  });
});
