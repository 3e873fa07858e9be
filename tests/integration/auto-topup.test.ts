import { describe, expect, it } from 'vitest';
import { handler as billing } from '#functions/http/billing';
import { handler as tokens } from '#functions/http/tokens';
import { activityOf } from '#tests/support/activity';
import { call, newUser } from '#tests/support/identity';

async function topUpsStarted(orgId: string): Promise<number> {
  const log = await activityOf(orgId);
  return log.filter((entry) => entry.action === 'billing.auto_topup_started').length;
}

describe('auto top-up', () => {
  it('starts one payment when a consume takes the balance below the threshold, not once per request', async () => {
    // Prepare: the signup bonus is 10,000; top up below 9,000.
    const owner = await newUser('topup');
    const configured = await call(billing, 'POST', '/billing/auto-topup', {
      token: owner.token,
      body: { enabled: true, threshold: 9_000, package_slug: 'starter' },
    });
    expect(configured.status).toBe(200);
    const consume = (reference: string) =>
      call(tokens, 'POST', '/tokens/consume', {
        token: owner.token,
        body: { amount: 500, action: 'run', reference_id: reference },
      });

    // Act: 10,000 → 9,500 → 9,000 → 8,500 (crosses) → 8,000, and the crossing request retried.
    const answers = [await consume('a'), await consume('b'), await consume('c'), await consume('d')];
    const retried = await consume('c');

    // Assess
    expect(answers.map((answer) => answer.body.data.balance)).toEqual([9_500, 9_000, 8_500, 8_000]);
    expect(answers.map((answer) => answer.body.data.auto_topup === null)).toEqual([true, true, false, true]);
    expect(answers[2]?.body.data.auto_topup).toEqual({
      payment_intent_id: expect.any(String),
      package_slug: 'starter',
    });
    expect(retried.body.data).toMatchObject({ duplicate: true, auto_topup: null });
    expect(await topUpsStarted(owner.orgId)).toBe(1);
  });

  it('starts nothing while auto top-up is disabled', async () => {
    const owner = await newUser('manual');
    await call(billing, 'POST', '/billing/auto-topup', {
      token: owner.token,
      body: { enabled: false, threshold: 9_900, package_slug: 'starter' },
    });

    const answer = await call(tokens, 'POST', '/tokens/consume', {
      token: owner.token,
      body: { amount: 500, action: 'run' },
    });

    expect(answer.body.data.auto_topup).toBeNull();
    expect(await topUpsStarted(owner.orgId)).toBe(0);
  });
});
