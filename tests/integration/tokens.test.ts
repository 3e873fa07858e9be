import { describe, expect, it } from 'vitest';
import { handler as tokens } from '#functions/http/tokens';
import { SIGNUP_BONUS_TOKENS } from '#lib/billing/catalogue';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { integrityProblems, scanTable } from '#tests/support/integrity';

const consume = (user: TestUser, body: Record<string, unknown>) =>
  call(tokens, 'POST', '/tokens/consume', { token: user.token, body });

const balanceOf = async (user: TestUser): Promise<number> =>
  (await call(tokens, 'GET', '/tokens/balance', { token: user.token })).body.data.balance;

// biome-ignore lint/suspicious/noExplicitAny: ledger entries as the API returns them
const ledgerOf = async (user: TestUser): Promise<any[]> =>
  (await call(tokens, 'GET', '/tokens/transactions', { token: user.token, query: { limit: '200' } })).body.data;

describe('the token ledger over its endpoints', () => {
  it('gives a new organization the signup bonus once, as its whole balance', async () => {
    // Prepare
    const user = await newUser('bonus');

    // Act
    const balance = await call(tokens, 'GET', '/tokens/balance', { token: user.token });
    const ledger = await call(tokens, 'GET', '/tokens/transactions', { token: user.token });

    // Assess
    expect(balance.status).toBe(200);
    expect(balance.body.data).toEqual({
      balance: SIGNUP_BONUS_TOKENS,
      organization_id: user.orgId,
      updated_at: expect.any(String),
    });
    expect(ledger.body.meta).toEqual({ total: 1, limit: 50, offset: 0 });
    expect(ledger.body.data).toEqual([
      expect.objectContaining({
        type: 'signup_bonus',
        amount: SIGNUP_BONUS_TOKENS,
        balance_after: SIGNUP_BONUS_TOKENS,
        actor: 'system',
      }),
    ]);
  });

  it('consumes tokens and records a negative entry with the balance after it', async () => {
    // Prepare
    const user = await newUser('spender');

    // Act
    const spent = await consume(user, { amount: 1_200, action: 'agent.run', metadata: { agent: 'scout' } });

    // Assess
    expect(spent.status).toBe(200);
    expect(spent.body.data).toEqual({
      transaction: expect.objectContaining({
        type: 'consume',
        amount: -1_200,
        balance_after: SIGNUP_BONUS_TOKENS - 1_200,
        action: 'agent.run',
        reference_id: null,
        metadata: { agent: 'scout' },
        actor: `user:${user.id}`,
      }),
      balance: SIGNUP_BONUS_TOKENS - 1_200,
      duplicate: false,
      auto_topup: null,
    });
    expect(await balanceOf(user)).toBe(SIGNUP_BONUS_TOKENS - 1_200);
  });

  it('refuses a non-positive, fractional, too large or non-numeric amount and a missing action with 400', async () => {
    // Prepare
    const user = await newUser('invalid');
    const bodies = [
      { amount: 0, action: 'a' },
      { amount: -5, action: 'a' },
      { amount: 1.5, action: 'a' },
      { amount: '10', action: 'a' },
      { amount: 10_000_001, action: 'a' },
      { amount: 10 },
      { amount: 10, action: '' },
      { amount: 10, action: 'a', reference_id: '' },
    ];

    // Act
    const responses = await Promise.all(bodies.map((body) => consume(user, body)));
    const badQuery = await call(tokens, 'GET', '/tokens/transactions', {
      token: user.token,
      query: { type: 'gift' },
    });
    const badCompany = await call(tokens, 'GET', '/tokens/balance', {
      token: user.token,
      query: { company_id: 'abc' },
    });

    // Assess
    for (const response of responses) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect(badQuery.status).toBe(400);
    expect(badCompany.status).toBe(400);
    expect(await balanceOf(user)).toBe(SIGNUP_BONUS_TOKENS);
  });

  it.each([
    { shape: 'metadata nested 12 levels', depth: 12, path: 'body.metadata' },
    { shape: 'metadata nested 32 levels', depth: 32, path: 'body' },
    { shape: 'metadata nested 3,000 levels', depth: 3_000, path: 'body' },
  ])('answers $shape with 400 naming where, and consumes nothing', async ({ depth, path }) => {
    // Prepare
    const user = await newUser('deep');
    let metadata: Record<string, unknown> = { leaf: true };
    for (let level = 1; level < depth; level += 1) metadata = { next: metadata };

    // Act
    const response = await consume(user, { amount: 10, action: 'agent.run', metadata });
    const balance = await call(tokens, 'GET', '/tokens/balance', { token: user.token });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(response.body.error.details[0].path).toBe(path);
    expect(balance.body.data.balance).toBe(10_000);
  });

  it('answers metadata larger than 16 KB as JSON with 400', async () => {
    const user = await newUser('bulky');
    const response = await consume(user, { amount: 10, action: 'agent.run', metadata: { text: 'x'.repeat(20_000) } });
    expect(response.status).toBe(400);
    expect(response.body.error.details[0]).toMatchObject({ path: 'body.metadata' });
  });

  it('answers 402 with the balance and the amount when the balance is short, and changes nothing', async () => {
    // Prepare
    const user = await newUser('short');

    // Act
    const refused = await consume(user, { amount: SIGNUP_BONUS_TOKENS + 1, action: 'big.job' });

    // Assess
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('PAYMENT_REQUIRED');
    expect(refused.body.error.details).toEqual([
      expect.objectContaining({ balance: SIGNUP_BONUS_TOKENS, required: SIGNUP_BONUS_TOKENS + 1 }),
    ]);
    expect(await balanceOf(user)).toBe(SIGNUP_BONUS_TOKENS);
    expect(await ledgerOf(user)).toHaveLength(1);
  });

  it('answers a repeated reference_id with the first result and consumes nothing more', async () => {
    // Prepare
    const user = await newUser('idem');
    const first = await consume(user, { amount: 300, action: 'job', reference_id: 'job-42' });

    // Act
    const repeat = await consume(user, { amount: 300, action: 'job', reference_id: 'job-42' });
    const changedAmount = await consume(user, { amount: 999, action: 'job', reference_id: 'job-42' });

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data.duplicate).toBe(false);
    for (const response of [repeat, changedAmount]) {
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({ ...first.body.data, duplicate: true });
    }
    expect(await balanceOf(user)).toBe(SIGNUP_BONUS_TOKENS - 300);
    expect(await ledgerOf(user)).toHaveLength(2);
  });

  it('consumes a reference_id once when the same request arrives many times at once', async () => {
    // Prepare
    const user = await newUser('idemrace');

    // Act
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => consume(user, { amount: 100, action: 'job', reference_id: 'race-1' })),
    );

    // Assess
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    expect(responses.filter((response) => !response.body.data.duplicate)).toHaveLength(1);
    expect(new Set(responses.map((response) => response.body.data.transaction.id)).size).toBe(1);
    expect(await balanceOf(user)).toBe(SIGNUP_BONUS_TOKENS - 100);
  });

  it('filters the ledger by type and pages it newest first with an exact total', async () => {
    // Prepare
    const user = await newUser('pager');
    for (const amount of [10, 20, 30]) await consume(user, { amount, action: `step.${amount}` });

    // Act
    const page = await call(tokens, 'GET', '/tokens/transactions', {
      token: user.token,
      query: { type: 'consume', limit: '2', offset: '1' },
    });
    const bonuses = await call(tokens, 'GET', '/tokens/transactions', {
      token: user.token,
      query: { type: 'signup_bonus' },
    });
    const all = await call(tokens, 'GET', '/tokens/transactions', { token: user.token });

    // Assess
    expect(page.status).toBe(200);
    expect(page.body.meta).toEqual({ total: 3, limit: 2, offset: 1 });
    expect(page.body.data.map((entry: { amount: number }) => entry.amount)).toEqual([-20, -10]);
    expect(bonuses.body.meta.total).toBe(1);
    expect(all.body.meta.total).toBe(4);
    expect(all.body.data.at(-1).type).toBe('signup_bonus');
  });

  it('keeps each organization’s balance and ledger its own', async () => {
    // Prepare
    const spender = await newUser('tenanta');
    const other = await newUser('tenantb');

    // Act
    await consume(spender, { amount: 4_000, action: 'job', company_id: 12345 });
    const otherBalance = await call(tokens, 'GET', '/tokens/balance', {
      token: other.token,
      query: { company_id: '1' },
    });

    // Assess
    expect(otherBalance.body.data).toMatchObject({
      balance: SIGNUP_BONUS_TOKENS,
      organization_id: other.orgId,
    });
    expect(await ledgerOf(other)).toEqual([expect.objectContaining({ type: 'signup_bonus' })]);
    expect(await balanceOf(spender)).toBe(SIGNUP_BONUS_TOKENS - 4_000);
  });

  it('lets exactly as many of 50 concurrent consumes succeed as the balance covers, never going negative', async () => {
    // Prepare: the signup bonus of 10,000 covers exactly 20 consumes of 500.
    const user = await newUser('race');
    const amount = 500;
    const start = await balanceOf(user);
    const fits = Math.floor(start / amount);

    // Act
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) => consume(user, { amount, action: `race.${index}` })),
    );

    // Assess
    const statuses = responses.map((response) => response.status);
    expect(fits).toBe(20);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 402)).toHaveLength(30);
    const balance = await balanceOf(user);
    expect(balance).toBe(start - 20 * amount);
    const ledger = await ledgerOf(user);
    expect(ledger.reduce((sum, entry) => sum + entry.amount, 0)).toBe(balance);
    // Every successful consume saw a distinct exact balance: 9,500, 9,000, … 0.
    const after = ledger
      .filter((entry) => entry.type === 'consume')
      .map((entry) => entry.balance_after)
      .sort((a, b) => b - a);
    expect(after).toEqual(Array.from({ length: 20 }, (_, index) => start - (index + 1) * amount));
    expect(integrityProblems(await scanTable())).toEqual([]);
  }, 60_000);

  it('lets every one of 50 concurrent consumes the balance covers succeed, each with its exact balance', async () => {
    // Prepare: 50 consumes of 150 take 7,500 of the signup bonus's 10,000.
    const user = await newUser('allfit');
    const amount = 150;
    const start = await balanceOf(user);

    // Act
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) => consume(user, { amount, action: `fit.${index}` })),
    );

    // Assess
    expect(responses.map((response) => response.status)).toEqual(Array(50).fill(200));
    const balance = await balanceOf(user);
    expect(balance).toBe(start - 50 * amount);
    const consumes = (await ledgerOf(user)).filter((entry) => entry.type === 'consume');
    expect(consumes.reduce((sum, entry) => sum + entry.amount, 0)).toBe(balance - start);
    // Each answer's balance is the one its own entry recorded, and no two consumes saw the same balance.
    const answered = responses.map((response) => response.body.data.balance).sort((a, b) => b - a);
    expect(answered).toEqual(Array.from({ length: 50 }, (_, index) => start - (index + 1) * amount));
    expect(consumes.map((entry) => entry.balance_after).sort((a, b) => b - a)).toEqual(answered);
    expect(integrityProblems(await scanTable())).toEqual([]);
  }, 60_000);
});
