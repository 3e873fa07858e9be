import { beforeAll, describe, expect, it } from 'vitest';
import { handler as rules } from '#functions/http/rules';
import { transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { ruleKeys } from '#lib/rules/rule-keys';
import { getRuleItem, ruleDelete, ruleReplace } from '#lib/rules/rule-records';
import { activityOf } from '#tests/support/activity';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';

/**
 * GET, POST /rules, PATCH and DELETE /rules/{id} against DynamoDB Local: scopes and the agent filter
 * (its own rules and the universal ones), permanent rules, versioned writes, activity and tenancy.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps every other
  // user an ordinary one.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function createRule(user: TestUser, body: Record<string, unknown>) {
  const response = await call(rules, 'POST', '/rules', as(user, { body }));
  if (response.status !== 201) throw new Error(`create rule failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; [field: string]: unknown };
}

const list = (user: TestUser, query: Record<string, string> = {}) => call(rules, 'GET', '/rules', as(user, { query }));
const ids = (response: { body: { data: Array<{ id: number }> } }) => response.body.data.map((rule) => rule.id);

const invalid = (path: string) => ({
  error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: [{ path, message: expect.any(String) }] },
});

describe('POST /rules', () => {
  it('creates a universal, not permanent rule by default, and records it', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(rules, 'POST', '/rules', as(owner, { body: { rule: '  Never push to main.  ' } }));

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.any(Number),
        rule: 'Never push to main.',
        scope: 'universal',
        agent_name: null,
        category: null,
        permanent: false,
        created_at: expect.any(String),
        updated_at: response.body.data.created_at,
      },
    });
    expect((await activityOf(owner.orgId)).filter((entry) => entry.entity_type === 'rule')).toMatchObject([
      { action: 'rule.created', entity_id: String(response.body.data.id), metadata: { scope: 'universal' } },
    ]);
  });

  it('creates an agent-scoped permanent rule with a category', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const created = await createRule(owner, {
      rule: 'Only touch the billing module.',
      scope: 'agent:billing-bot',
      category: 'Scope',
      permanent: true,
    });

    // Assess
    expect(created).toMatchObject({ scope: 'agent:billing-bot', agent_name: 'billing-bot', category: 'Scope' });
    expect(created.permanent).toBe(true);
  });

  it.each([
    ['rule', {}],
    ['rule', { rule: '   ' }],
    ['rule', { rule: 'x'.repeat(4001) }],
    ['scope', { rule: 'r', scope: 'team:core' }],
    ['scope', { rule: 'r', scope: 'agent:Not_A_Name' }],
    ['permanent', { rule: 'r', permanent: 'yes' }],
  ])('answers 400 naming body.%s for %j', async (field, body) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(rules, 'POST', '/rules', as(owner, { body }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(`body.${field}`));
  });
});

describe('GET /rules', () => {
  it('filters by scope, agent (its own rules and the universal ones), category and permanent', async () => {
    // Prepare
    const owner = await newUser('owner');
    const everyone = await createRule(owner, { rule: 'Run the tests.', category: 'quality', permanent: true });
    const builder = await createRule(owner, { rule: 'Small commits.', scope: 'agent:builder', category: 'Quality' });
    const reviewer = await createRule(owner, { rule: 'Read every line.', scope: 'agent:reviewer' });
    const secrets = await createRule(owner, { rule: 'No secrets in code.', category: 'security' });

    // Act
    const all = await list(owner);
    const universal = await list(owner, { scope: 'universal' });
    const ofBuilder = await list(owner, { agent: 'builder' });
    const ownOnly = await list(owner, { agent: 'builder', scope: 'agent:builder' });
    const elsewhere = await list(owner, { agent: 'builder', scope: 'agent:reviewer' });
    const quality = await list(owner, { category: 'QUALITY' });
    const permanent = await list(owner, { permanent: '1' });
    const notPermanent = await list(owner, { agent: 'builder', permanent: '0' });
    const page = await list(owner, { limit: '2', offset: '1' });

    // Assess
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual([everyone.id, builder.id, reviewer.id, secrets.id]);
    expect(all.body.meta).toEqual({ total: 4, limit: 50, offset: 0 });
    expect(ids(universal)).toEqual([everyone.id, secrets.id]);
    expect(ids(ofBuilder)).toEqual([everyone.id, builder.id, secrets.id]);
    expect(ofBuilder.body.meta.total).toBe(3);
    expect(ids(ownOnly)).toEqual([builder.id]);
    expect(ids(elsewhere)).toEqual([]);
    expect(ids(quality)).toEqual([everyone.id, builder.id]);
    expect(ids(permanent)).toEqual([everyone.id]);
    expect(ids(notPermanent)).toEqual([builder.id, secrets.id]);
    expect(ids(page)).toEqual([builder.id, reviewer.id]);
    expect(page.body.meta).toEqual({ total: 4, limit: 2, offset: 1 });
  });

  it.each([
    ['permanent', { permanent: 'true' }],
    ['scope', { scope: 'everyone' }],
    ['agent', { agent: 'Bad Name' }],
  ])('answers 400 naming query.%s for %j', async (field, query) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await list(owner, query);

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(`query.${field}`));
  });
});

describe('PATCH /rules/{id}', () => {
  it('changes the fields given, moves the rule to its new scope, and records the change', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createRule(owner, { rule: 'Small commits.', scope: 'agent:builder', category: 'quality' });

    // Act
    const patched = await call(
      rules,
      'PATCH',
      `/rules/${created.id}`,
      as(owner, { body: { scope: 'universal', category: null, rule: 'Small, reviewed commits.' } }),
    );
    const ofBuilderOnly = await list(owner, { scope: 'agent:builder' });
    const universal = await list(owner, { scope: 'universal' });

    // Assess
    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({
      ...created,
      rule: 'Small, reviewed commits.',
      scope: 'universal',
      agent_name: null,
      category: null,
      updated_at: expect.any(String),
    });
    expect(ids(ofBuilderOnly)).toEqual([]);
    expect(ids(universal)).toEqual([created.id]);
    const entries = (await activityOf(owner.orgId)).filter((entry) => entry.action === 'rule.updated');
    expect(entries).toMatchObject([
      { entity_id: String(created.id), metadata: { changed: ['rule', 'scope', 'category'] } },
    ]);
  });

  it('makes a rule permanent, corrects a permanent rule, and answers 403 to making it not permanent', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createRule(owner, { rule: 'Run the tests.' });
    const patch = (fields: Record<string, unknown>) =>
      call(rules, 'PATCH', `/rules/${created.id}`, as(owner, { body: fields }));

    // Act
    const madePermanent = await patch({ permanent: true });
    const corrected = await patch({ rule: 'Run all the tests.' });
    const unmade = await patch({ permanent: false, rule: 'Run some tests.' });

    // Assess
    expect(madePermanent.body.data.permanent).toBe(true);
    expect(corrected.status).toBe(200);
    expect(unmade.status).toBe(403);
    expect(unmade.body.error.code).toBe('FORBIDDEN');
    expect((await list(owner)).body.data).toMatchObject([{ rule: 'Run all the tests.', permanent: true }]);
  });

  it('loses neither of two concurrent changes, and refuses a write based on an old version', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createRule(owner, { rule: 'Run the tests.' });
    const read = await getRuleItem(owner.orgId, created.id);
    if (!read) throw new Error('rule missing');
    const patch = (fields: Record<string, unknown>) =>
      call(rules, 'PATCH', `/rules/${created.id}`, as(owner, { body: fields }));

    // Act
    const answers = await Promise.all([patch({ category: 'quality' }), patch({ permanent: true })]);
    const late = transact([ruleReplace({ ...read, rule: 'overwritten', version: read.version + 1 }, read.version)]);

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    await expect(late).rejects.toSatisfy((error) => isConditionFailed(error, 'stale'));
    expect((await list(owner)).body.data).toMatchObject([
      { rule: 'Run the tests.', category: 'quality', permanent: true },
    ]);
  });

  it('answers 404 for an unknown rule and 400 for an empty body', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createRule(owner, { rule: 'Run the tests.' });

    // Act
    const unknown = await call(rules, 'PATCH', '/rules/424242', as(owner, { body: { rule: 'x' } }));
    const empty = await call(rules, 'PATCH', `/rules/${created.id}`, as(owner, { body: {} }));

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: 'NOT_FOUND', message: 'Rule not found', details: [] } });
    expect(empty.status).toBe(400);
  });
});

describe('DELETE /rules/{id}', () => {
  it('deletes a rule, answers it as it was, and records the deletion', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createRule(owner, { rule: 'Run the tests.' });

    // Act
    const deleted = await call(rules, 'DELETE', `/rules/${created.id}`, as(owner));
    const again = await call(rules, 'DELETE', `/rules/${created.id}`, as(owner));

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: created, meta: { deleted: true } });
    expect(again.status).toBe(404);
    expect((await list(owner)).body.meta.total).toBe(0);
    expect((await activityOf(owner.orgId)).map((entry) => entry.action)).toContain('rule.deleted');
  });

  it('answers 403 in the error envelope for a permanent rule, which stays', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createRule(owner, { rule: 'Never push to main.', permanent: true });

    // Act
    const response = await call(rules, 'DELETE', `/rules/${created.id}`, as(owner));

    // Assess
    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      error: { code: 'FORBIDDEN', message: 'A permanent rule cannot be deleted', details: [] },
    });
    expect(ids(await list(owner))).toEqual([created.id]);
  });

  it('keeps a rule made permanent after the delete read it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createRule(owner, { rule: 'Never push to main.' });
    const read = await getRuleItem(owner.orgId, created.id);
    if (!read) throw new Error('rule missing');
    await call(rules, 'PATCH', `/rules/${created.id}`, as(owner, { body: { permanent: true } }));

    // Act
    const late = transact([ruleDelete(owner.orgId, created.id, read.version)]);

    // Assess
    await expect(late).rejects.toSatisfy((error) => isConditionFailed(error, 'stale'));
    expect(await getRuleItem(owner.orgId, created.id)).toMatchObject({ ...ruleKeys.byId(owner.orgId, created.id) });
  });
});

describe('rules and tenancy', () => {
  it('never shows or changes another organization’s rules', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const created = await createRule(owner, { rule: 'Run the tests.', scope: 'agent:builder' });

    // Act
    const all = await list(stranger);
    const ofAgent = await list(stranger, { agent: 'builder' });
    const patched = await call(rules, 'PATCH', `/rules/${created.id}`, as(stranger, { body: { rule: 'x' } }));
    const deleted = await call(rules, 'DELETE', `/rules/${created.id}`, as(stranger));

    // Assess
    expect(all.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(ofAgent.body.meta.total).toBe(0);
    expect([patched.status, deleted.status]).toEqual([404, 404]);
    expect((await list(owner)).body.data).toEqual([created]);
  });
});
