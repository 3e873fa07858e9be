import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentPipelinesHandler } from '#functions/http/agent-pipelines';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { type MemoryQueue, memoryQueue } from '#lib/adapters/local/memory-queue';
import {
  type CallOptions,
  type CallResult,
  call,
  joinOrganization,
  newUser,
  type TestUser,
} from '#tests/support/identity';
import { testQueue } from '#tests/support/queues';

const tenantConfig = tenantConfigHandler({ ports: { queue: testQueue } });
const pipelines = agentPipelinesHandler({ ports: { queue: testQueue } });

/** Sends made by the endpoints land here; this file checks the configuration, not the deliveries. */
const sent: unknown[] = [];
let queue: MemoryQueue;

beforeAll(async () => {
  queue = memoryQueue({
    consumers: {
      'webhook-delivery': async (event) => {
        sent.push(event);
        return { batchItemFailures: [] };
      },
    },
  });
  testQueue.use(queue);
  // The first user of this file's table is the instance admin, who counts as an admin everywhere;
  // taking that place here keeps every other user an ordinary one.
  await newUser('instanceadmin');
});

afterAll(() => queue.close());

interface Organization {
  owner: TestUser;
  orgAdmin: TestUser;
  member: TestUser;
  as: (user: TestUser, options?: CallOptions) => CallOptions;
}

/** An organization (the owner's personal one) with an admin and a plain member. */
async function organization(): Promise<Organization> {
  const owner = await newUser('owner');
  const orgAdmin = await newUser('orgadmin');
  const member = await newUser('member');
  await joinOrganization(orgAdmin, owner.orgId, 'admin');
  await joinOrganization(member, owner.orgId, 'member');
  return {
    owner,
    orgAdmin,
    member,
    as: (user, options = {}) => ({
      ...options,
      token: user.token,
      headers: { 'x-organization-id': owner.orgId, ...options.headers },
    }),
  };
}

const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;
const NO_HOOKS = { task_completed: null, agent_error: null, pipeline_completed: null, pipeline_failed: null };

const patch = (options: CallOptions, webhooks: Record<string, unknown>, handler = tenantConfig) =>
  call(handler, 'PATCH', '/tenant-config', { ...options, body: { webhooks } });

const expectValidationError = (response: CallResult, path: string, message: RegExp) => {
  expect(response.status).toBe(400);
  expect(response.body.error.code).toBe('VALIDATION_ERROR');
  expect(response.body.error.details).toEqual(
    expect.arrayContaining([{ path, message: expect.stringMatching(message) }]),
  );
};

describe('GET /tenant-config', () => {
  it('answers every event without a URL and creates the signing secret on first read', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const first = await call(tenantConfig, 'GET', '/tenant-config', { token: owner.token });
    const second = await call(tenantConfig, 'GET', '/tenant-config', { token: owner.token });

    // Assess
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      data: {
        webhooks: NO_HOOKS,
        signing_secret: expect.stringMatching(SECRET),
        deploy_pipeline_id: null,
        updated_at: null,
      },
    });
    expect(second.body.data.signing_secret).toBe(first.body.data.signing_secret);
  });

  it('creates one secret when several first reads arrive at once', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => call(tenantConfig, 'GET', '/tenant-config', { token: owner.token })),
    );
    const current = await call(tenantConfig, 'GET', '/tenant-config', { token: owner.token });

    // Assess
    const secrets = new Set(responses.map((response) => response.body.data.signing_secret));
    expect(secrets).toEqual(new Set([current.body.data.signing_secret]));
  });

  it('shows the URLs but not the secret to a member who is not an admin', async () => {
    // Prepare
    const org = await organization();
    await patch(org.as(org.owner), { task_completed: 'https://hooks.example.com/tasks' });

    // Act
    const asMember = await call(tenantConfig, 'GET', '/tenant-config', org.as(org.member));
    const asAdmin = await call(tenantConfig, 'GET', '/tenant-config', org.as(org.orgAdmin));

    // Assess
    expect(asMember.status).toBe(200);
    expect(asMember.body.data).toEqual({
      webhooks: { ...NO_HOOKS, task_completed: 'https://hooks.example.com/tasks' },
      signing_secret: null,
      deploy_pipeline_id: null,
      updated_at: expect.any(String),
    });
    expect(asAdmin.body.data.signing_secret).toMatch(SECRET);
  });

  it('answers 401 without a credential', async () => {
    // Act
    const response = await call(tenantConfig, 'GET', '/tenant-config');

    // Assess
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
  });
});

describe('PATCH /tenant-config', () => {
  it('registers URLs, keeps the events not named, and removes a URL given null', async () => {
    // Prepare
    const owner = await newUser('owner');
    const options = { token: owner.token };

    // Act
    const registered = await patch(options, {
      task_completed: 'https://hooks.example.com/tasks',
      agent_error: 'https://hooks.example.com/errors',
    });
    const removed = await patch(options, {
      agent_error: null,
      pipeline_failed: 'https://hooks.example.com/p',
    });
    const read = await call(tenantConfig, 'GET', '/tenant-config', options);

    // Assess
    expect(registered.status).toBe(200);
    expect(registered.body.data).toEqual({
      webhooks: {
        ...NO_HOOKS,
        task_completed: 'https://hooks.example.com/tasks',
        agent_error: 'https://hooks.example.com/errors',
      },
      signing_secret: expect.stringMatching(SECRET),
      deploy_pipeline_id: null,
      updated_at: expect.any(String),
    });
    const expected = {
      ...NO_HOOKS,
      task_completed: 'https://hooks.example.com/tasks',
      pipeline_failed: 'https://hooks.example.com/p',
    };
    expect(removed.body.data.webhooks).toEqual(expected);
    expect(read.body.data.webhooks).toEqual(expected);
    expect(read.body.data.signing_secret).toBe(registered.body.data.signing_secret);
  });

  it('answers 400 naming unknown event keys, and changes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const options = { token: owner.token };

    // Act
    const response = await patch(options, {
      task_completed: 'https://hooks.example.com/tasks',
      task_done: 'https://hooks.example.com/x',
      deploy: null,
    });
    const read = await call(tenantConfig, 'GET', '/tenant-config', options);

    // Assess
    expectValidationError(response, 'body.webhooks', /unknown event "task_done", "deploy"; events are task_completed/);
    expect(read.body.data.webhooks).toEqual(NO_HOOKS);
  });

  it.each([
    ['not a URL', 'hooks.example.com/tasks', /absolute URL/],
    ['another scheme', 'ftp://hooks.example.com/tasks', /https/],
    ['credentials in the URL', 'https://user:secret@hooks.example.com/tasks', /credentials/],
    ['more than 2048 characters', `https://hooks.example.com/${'a'.repeat(2040)}`, /2048/],
    ['a number', 42, /string/],
  ])('answers 400 for %s', async (_case, url, message) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await patch({ token: owner.token }, { task_completed: url });

    // Assess
    expectValidationError(response, 'body.webhooks.task_completed', message);
  });

  it('answers 400 without a webhooks object', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(tenantConfig, 'PATCH', '/tenant-config', {
      token: owner.token,
      body: { task_completed: 'https://hooks.example.com/tasks' },
    });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'body.webhooks' })]),
    );
  });

  it('names every invalid URL of one request', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await patch(
      { token: owner.token },
      { task_completed: 'nope', agent_error: 'https://hooks.example.com/ok', pipeline_failed: 'ftp://x' },
    );

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.details.map((detail: { path: string }) => detail.path).sort()).toEqual([
      'body.webhooks.pipeline_failed',
      'body.webhooks.task_completed',
    ]);
  });

  describe('where private targets are not allowed (ALLOW_PRIVATE_WEBHOOK_TARGETS=false)', () => {
    const deployed = tenantConfigHandler({ allowPrivateTargets: false, ports: { queue: testQueue } });

    it.each([
      ['plain http', 'http://hooks.example.com/tasks', /must use https/],
      ['a private address', 'https://10.0.0.7/hooks', /private address/],
      ['a loopback address', 'https://127.0.0.1:8080/hooks', /loopback address/],
      ['an IPv6 loopback address', 'https://[::1]/hooks', /loopback address/],
      ['the metadata endpoint', 'https://169.254.169.254/latest', /link-local address/],
      ['a carrier-grade NAT address', 'https://100.64.0.9/hooks', /carrier-grade NAT address/],
      ['a unique-local IPv6 address', 'https://[fd12:3456::1]/hooks', /unique-local address/],
      ['a link-local IPv6 address', 'https://[fe80::1]/hooks', /link-local address/],
      ['the unspecified address', 'https://0.0.0.0/hooks', /unspecified address/],
      ['an IPv4-mapped private address', 'https://[::ffff:192.168.1.4]/hooks', /private address/],
      ['a loopback address in decimal', 'https://2130706433/hooks', /loopback address/],
      ['localhost', 'https://localhost/hooks', /localhost/],
    ])('answers 400 for %s', async (_case, url, message) => {
      // Prepare
      const owner = await newUser('owner');

      // Act
      const response = await patch({ token: owner.token }, { task_completed: url }, deployed);

      // Assess
      expectValidationError(response, 'body.webhooks.task_completed', message);
    });

    it.each([
      'https://localhost/hook',
      'https://localhost./hook',
      'https://localhost../hook',
      'https://LOCALHOST/hook',
      'https://LocalHost./hook',
      'https://foo.localhost/hook',
      'https://foo.localhost./hook',
    ])('answers 400 for %s, refused by its name', async (url) => {
      // Prepare
      const owner = await newUser('owner');

      // Act
      const response = await patch({ token: owner.token }, { task_completed: url }, deployed);

      // Assess
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ path: 'body.webhooks.task_completed', message: 'must not point to localhost' }],
      });
    });

    // The URL parser already reads every IPv4 spelling (decimal, hex, octal, short forms) as a dotted quad
    // and writes IPv6 in its shortest form; these pin that each spelling is judged as the address it is.
    it.each([
      ['https://2130706433/hook', 'loopback'],
      ['https://0x7f000001/hook', 'loopback'],
      ['https://0x7f.0.0.1/hook', 'loopback'],
      ['https://0177.0.0.1/hook', 'loopback'],
      ['https://017700000001/hook', 'loopback'],
      ['https://127.1/hook', 'loopback'],
      ['https://127.0.1/hook', 'loopback'],
      ['https://127.0.0.1./hook', 'loopback'],
      ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
      ['https://[::ffff:7f00:1]/hook', 'loopback'],
      ['https://[0:0:0:0:0:ffff:127.0.0.1]/hook', 'loopback'],
      ['https://[::127.0.0.1]/hook', 'loopback'],
      ['https://0xa.1/hook', 'private'],
      ['https://0251.0376.0251.0376/latest', 'link-local'],
    ])('answers 400 for %s, a %s address', async (url, range) => {
      // Prepare
      const owner = await newUser('owner');

      // Act
      const response = await patch({ token: owner.token }, { task_completed: url }, deployed);

      // Assess
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ path: 'body.webhooks.task_completed', message: `must not point to a ${range} address` }],
      });
    });

    it('accepts a public https URL', async () => {
      // Prepare
      const owner = await newUser('owner');

      // Act
      const response = await patch(
        { token: owner.token },
        { task_completed: 'https://93.184.215.14/hooks', agent_error: 'https://hooks.example.com/x' },
        deployed,
      );

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.data.webhooks.task_completed).toBe('https://93.184.215.14/hooks');
    });
  });

  it('answers 403 to a member who is not an admin, and changes nothing', async () => {
    // Prepare
    const org = await organization();

    // Act
    const response = await patch(org.as(org.member), { task_completed: 'https://hooks.example.com/x' });
    const read = await call(tenantConfig, 'GET', '/tenant-config', org.as(org.owner));

    // Assess
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('FORBIDDEN');
    expect(read.body.data.webhooks).toEqual(NO_HOOKS);
  });

  it('lets an organization admin change the configuration', async () => {
    // Prepare
    const org = await organization();

    // Act
    const response = await patch(org.as(org.orgAdmin), { agent_error: 'https://hooks.example.com/e' });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.webhooks.agent_error).toBe('https://hooks.example.com/e');
  });
});

describe('PATCH /tenant-config deploy_pipeline_id', () => {
  /** A one-stage pipeline of the caller's organization; its id. */
  async function createPipeline(options: CallOptions): Promise<number> {
    const body = { name: `Deploy ${crypto.randomUUID()}`, stages: [{ name: 'ship', agent: 'qa-tester' }] };
    const response = await call(pipelines, 'POST', '/agent-pipelines', { ...options, body });
    if (response.status !== 201) throw new Error(`create failed: ${JSON.stringify(response.body)}`);
    return response.body.data.id;
  }

  it('names a pipeline of the organization, keeps the webhooks, and removes it given null', async () => {
    // Prepare
    const org = await organization();
    const pipelineId = await createPipeline(org.as(org.owner));
    await patch(org.as(org.owner), { task_completed: 'https://hooks.example.com/tasks' });

    // Act
    const set = await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...org.as(org.orgAdmin),
      body: { deploy_pipeline_id: pipelineId },
    });
    const read = await call(tenantConfig, 'GET', '/tenant-config', org.as(org.member));
    const removed = await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...org.as(org.owner),
      body: { deploy_pipeline_id: null },
    });

    // Assess
    expect(set.status).toBe(200);
    expect(set.body.data.deploy_pipeline_id).toBe(pipelineId);
    expect(set.body.data.webhooks.task_completed).toBe('https://hooks.example.com/tasks');
    expect(read.body.data.deploy_pipeline_id).toBe(pipelineId);
    expect(removed.status).toBe(200);
    expect(removed.body.data.deploy_pipeline_id).toBeNull();
    expect(removed.body.data.webhooks.task_completed).toBe('https://hooks.example.com/tasks');
  });

  it('answers 400 for a pipeline the organization does not have, and changes nothing', async () => {
    // Prepare
    const org = await organization();
    const other = await newUser('other');
    // Pipeline ids count per organization: the other one's second pipeline has an id this one lacks.
    await createPipeline({ token: other.token });
    const othersPipeline = await createPipeline({ token: other.token });
    const ownPipeline = await createPipeline(org.as(org.owner));
    await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...org.as(org.owner),
      body: { deploy_pipeline_id: ownPipeline },
    });

    // Act
    const unknown = await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...org.as(org.owner),
      body: { deploy_pipeline_id: 999_999, webhooks: { task_completed: 'https://hooks.example.com/t' } },
    });
    const foreign = await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...org.as(org.owner),
      body: { deploy_pipeline_id: othersPipeline },
    });
    const read = await call(tenantConfig, 'GET', '/tenant-config', org.as(org.owner));

    // Assess
    expectValidationError(unknown, 'body.deploy_pipeline_id', /names no pipeline of this organization/);
    expectValidationError(foreign, 'body.deploy_pipeline_id', /names no pipeline of this organization/);
    expect(read.body.data.deploy_pipeline_id).toBe(ownPipeline);
    expect(read.body.data.webhooks).toEqual(NO_HOOKS);
  });

  it('answers 400 for an id that is not a positive integer, and for a body naming neither field', async () => {
    // Prepare
    const org = await organization();

    // Act
    const text = await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...org.as(org.owner),
      body: { deploy_pipeline_id: '7' },
    });
    const zero = await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...org.as(org.owner),
      body: { deploy_pipeline_id: 0 },
    });
    const empty = await call(tenantConfig, 'PATCH', '/tenant-config', { ...org.as(org.owner), body: {} });

    // Assess
    expectValidationError(text, 'body.deploy_pipeline_id', /.+/);
    expectValidationError(zero, 'body.deploy_pipeline_id', /.+/);
    expectValidationError(empty, 'body.webhooks', /name webhooks, deploy_pipeline_id or both/);
  });

  it('answers 403 to a member who is not an admin', async () => {
    // Prepare
    const org = await organization();
    const pipelineId = await createPipeline(org.as(org.owner));

    // Act
    const response = await call(tenantConfig, 'PATCH', '/tenant-config', {
      ...org.as(org.member),
      body: { deploy_pipeline_id: pipelineId },
    });
    const read = await call(tenantConfig, 'GET', '/tenant-config', org.as(org.owner));

    // Assess
    expect(response.status).toBe(403);
    expect(read.body.data.deploy_pipeline_id).toBeNull();
  });
});

describe('POST /tenant-config/webhook-secret/rotate', () => {
  it('answers a new secret, which GET shows from then on', async () => {
    // Prepare
    const owner = await newUser('owner');
    const before = await call(tenantConfig, 'GET', '/tenant-config', { token: owner.token });

    // Act
    const rotated = await call(tenantConfig, 'POST', '/tenant-config/webhook-secret/rotate', {
      token: owner.token,
    });
    const after = await call(tenantConfig, 'GET', '/tenant-config', { token: owner.token });

    // Assess
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.signing_secret).toMatch(SECRET);
    expect(rotated.body.data.signing_secret).not.toBe(before.body.data.signing_secret);
    expect(after.body.data.signing_secret).toBe(rotated.body.data.signing_secret);
  });

  it('answers 403 to a member who is not an admin', async () => {
    // Prepare
    const org = await organization();

    // Act
    const response = await call(tenantConfig, 'POST', '/tenant-config/webhook-secret/rotate', org.as(org.member));

    // Assess
    expect(response.status).toBe(403);
  });
});

describe('POST /tenant-config/webhooks/test', () => {
  it('answers 404 when no URL is registered', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(tenantConfig, 'POST', '/tenant-config/webhooks/test', { token: owner.token });

    // Assess
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
  });

  it('answers 400 when the named event has no URL, and 400 for an unknown event', async () => {
    // Prepare
    const owner = await newUser('owner');
    await patch({ token: owner.token }, { task_completed: 'https://hooks.example.com/tasks' });

    // Act
    const noUrl = await call(tenantConfig, 'POST', '/tenant-config/webhooks/test', {
      token: owner.token,
      body: { event: 'agent_error' },
    });
    const unknown = await call(tenantConfig, 'POST', '/tenant-config/webhooks/test', {
      token: owner.token,
      body: { event: 'nonsense' },
    });

    // Assess
    expectValidationError(noUrl, 'body.event', /agent_error has no registered URL/);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0].path).toBe('body.event');
  });

  it('answers 403 to a member who is not an admin', async () => {
    // Prepare
    const org = await organization();
    await patch(org.as(org.owner), { task_completed: 'https://hooks.example.com/tasks' });

    // Act
    const response = await call(tenantConfig, 'POST', '/tenant-config/webhooks/test', org.as(org.member));

    // Assess
    expect(response.status).toBe(403);
  });
});

describe('GET /tenant-config/webhook-deliveries/{id}', () => {
  it('answers 400 for something that is not a delivery id and 404 for an unknown one', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const malformed = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries/42', {
      token: owner.token,
    });
    const unknown = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries/msg_000000000AAAAAAAAAAAAAA', {
      token: owner.token,
    });

    // Assess
    expect(malformed.status).toBe(400);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
  });

  it('lists no deliveries for a new organization', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', {
      token: owner.token,
    });

    // Assess
    expect(response.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
  });
});
