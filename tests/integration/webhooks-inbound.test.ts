import { createHmac, randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as deployments } from '#functions/http/deployments';
import { bindings } from '#functions/http/webhooks';
import { email } from '#lib/app/email';
import { keys as keyManagement } from '#lib/app/keys';
import { db, TABLE } from '#lib/db/client';
import { tenantPk } from '#lib/db/keys';
import { groupHandler } from '#lib/http/group-handler';
import { fixedClock } from '#lib/kernel/clock';
import { logger } from '#lib/logger';
import { context, httpEvent, loadEvent } from '#tests/support/events';
import { call, joinOrganization, newUser, outboxFor, type TestUser } from '#tests/support/identity';
import { jobItemsOf } from '#tests/support/jobs';
import { captureLogs } from '#tests/support/logs';
import { newWebhookSecret, storeInboundSecrets } from '#tests/support/webhook-secrets';

/**
 * The signed inbound webhooks, end to end through the real middleware stack and DynamoDB Local.
 * Signatures are built here with node:crypto from each provider's public format, never with the code
 * under test.
 */

const clock = fixedClock(new Date('2026-01-05T12:00:00Z'));
const webhooks = groupHandler('webhooks', bindings, { ports: { clock, keys: keyManagement, email } });

const UNAUTHORIZED = {
  error: { code: 'UNAUTHORIZED', message: 'Invalid webhook signature', details: [] },
};

interface Organization {
  orgId: string;
  owner: TestUser;
  orgAdmin: TestUser;
  member: TestUser;
  secrets: { git: string; deploy: string; chat: string };
}

/** An organization with an admin and a member, whose credential store holds the three webhook secrets. */
async function organization(withSecrets = true): Promise<Organization> {
  const owner = await newUser('owner');
  const orgAdmin = await newUser('orgadmin');
  const member = await newUser('member');
  await joinOrganization(orgAdmin, owner.orgId, 'admin');
  await joinOrganization(member, owner.orgId, 'member');
  const secrets = withSecrets
    ? await storeInboundSecrets(owner)
    : { git: newWebhookSecret(), deploy: newWebhookSecret(), chat: newWebhookSecret() };
  return { orgId: owner.orgId, owner, orgAdmin, member, secrets };
}

let org: Organization;

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps the others plain.
  await newUser('instanceadmin');
  org = await organization();
});

afterEach(() => {
  vi.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

const hmacHex = (secret: string, message: string) => createHmac('sha256', secret).update(message, 'utf8').digest('hex');

/** The git host's headers: `X-Hub-Signature-256: sha256=<hex HMAC of the raw body>`. */
function gitHeaders(secret: string, rawBody: string, options: { event?: string; delivery?: string } = {}) {
  return {
    'x-github-event': options.event ?? 'push',
    'x-github-delivery': options.delivery ?? crypto.randomUUID(),
    'x-hub-signature-256': `sha256=${hmacHex(secret, rawBody)}`,
  };
}

const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

/** The deploy and chat headers: `v1=<hex HMAC of "timestamp.body">`. */
function timestampedHeaders(secret: string, rawBody: string, timestamp = nowSeconds()) {
  return {
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': `v1=${hmacHex(secret, `${timestamp}.${rawBody}`)}`,
  };
}

interface Response {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies of every shape
  body: any;
  text: string;
}

/** Posts an exact raw body (signatures cover its bytes, so it is never re-serialized). */
async function post(
  path: string,
  rawBody: string | undefined,
  headers: Record<string, string>,
  orgId: string | undefined,
): Promise<Response> {
  const event = httpEvent('POST', `/api${path}`, {
    ...(rawBody === undefined ? {} : { body: rawBody }),
    headers: { 'content-type': 'application/json', ...headers },
    ...(orgId === undefined ? {} : { query: { org: orgId } }),
  });
  const response = (await webhooks(event, context())) as APIGatewayProxyStructuredResultV2;
  const text = response.body ?? '';
  return { status: response.statusCode ?? 200, body: text ? JSON.parse(text) : undefined, text };
}

const sample = (name: string) => loadEvent<Record<string, unknown>>(`webhooks/${name}`);

/** A sample with fresh ids, so that each test's delivery is new. */
function freshDeployEvent(name: 'deploy-completed' | 'deploy-failed', deploymentId?: string) {
  const event = sample(name);
  event.id = `evt_${randomBytes(10).toString('hex')}`;
  event.deployment_id = deploymentId ?? `dpl_${randomBytes(8).toString('hex')}`;
  return event;
}

function freshChatMessage() {
  const message = sample('chat-message');
  message.id = `msg_${randomBytes(10).toString('hex')}`;
  return message;
}

/** A push sample under a fresh commit, so that its body differs from every other test's. */
function freshPush(name: 'git-push' | 'git-push-logo') {
  const push = sample(name);
  push.after = randomBytes(20).toString('hex');
  return push;
}

/** Items of the organization whose sort key starts with `prefix`. */
async function itemsOf(orgId: string, prefix: string): Promise<Record<string, unknown>[]> {
  const result = await db.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix },
    }),
  );
  return result.Items ?? [];
}

/** Records the webhooks can create; a refused request must leave all of them untouched. */
async function recordCounts(orgId: string): Promise<Record<string, number | undefined>> {
  const prefixes = ['DEPLOYMENT#', 'ALERT#', 'SUPPORT#', 'WEBHOOKEVENT#'];
  const counts = await Promise.all(prefixes.map(async (prefix) => (await itemsOf(orgId, prefix)).length));
  return {
    ...Object.fromEntries(prefixes.map((prefix, index) => [prefix, counts[index]])),
    jobs: (await jobItemsOf(orgId)).length,
  };
}

describe('POST /webhooks/git', () => {
  it('records a pending deployment for a push to the default branch and says no pipeline is configured', async () => {
    // Prepare
    const push = freshPush('git-push');
    const rawBody = JSON.stringify(push);
    const delivery = crypto.randomUUID();

    // Act
    const response = await post(
      '/webhooks/git',
      rawBody,
      gitHeaders(org.secrets.git, rawBody, { delivery }),
      org.orgId,
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        received: true,
        event: 'push',
        duplicate: false,
        actions: [
          { type: 'deployment.recorded', id: `git-${delivery}`, status: 'pending' },
          {
            type: 'deploy_pipeline.not_configured',
            detail: 'No deploy pipeline is configured for this organization; the deployment stays pending',
          },
        ],
      },
    });
    const [deployment] = (await itemsOf(org.orgId, `DEPLOYMENT#git-${delivery}`)) as Array<Record<string, unknown>>;
    expect(deployment).toMatchObject({
      id: `git-${delivery}`,
      status: 'pending',
      source: 'git_push',
      repository: 'acme-robotics/ops-dashboard',
      branch: 'main',
      commit_sha: push.after,
      pusher: 'mirachen',
      pipeline_status: 'not_configured',
    });
    const jobs = await jobItemsOf(org.orgId, 'JOB#');
    expect(jobs.filter((job) => (job.payload as { commit_sha: string }).commit_sha === push.after)).toEqual([]);
  });

  it('queues a brand-assets job when the push adds or modifies logo images', async () => {
    // Prepare
    const push = freshPush('git-push-logo');
    const rawBody = JSON.stringify(push);
    const delivery = crypto.randomUUID();

    // Act
    const response = await post(
      '/webhooks/git',
      rawBody,
      gitHeaders(org.secrets.git, rawBody, { delivery }),
      org.orgId,
    );

    // Assess
    expect(response.status).toBe(200);
    const actions = response.body.data.actions as Array<{ type: string; id?: string }>;
    expect(actions.map((action) => action.type)).toEqual([
      'deployment.recorded',
      'deploy_pipeline.not_configured',
      'job.queued',
    ]);
    const jobId = actions[2]?.id as string;
    const [job] = await jobItemsOf(org.orgId, `JOB#${jobId}`);
    expect(job).toMatchObject({
      id: jobId,
      type: 'brand-assets',
      status: 'queued',
      payload: {
        repository: 'acme-robotics/ops-dashboard',
        commit_sha: push.after,
        files: ['assets/logo.svg', 'public/brand/logo-dark.png'],
        file_count: 2,
      },
      idempotency_key: `git:${delivery}`,
    });
  });

  it('acknowledges and ignores a push to another branch, logo images included', async () => {
    // Prepare
    const push = freshPush('git-push-logo');
    push.ref = 'refs/heads/feature/new-logo';
    const rawBody = JSON.stringify(push);
    const delivery = crypto.randomUUID();
    const before = await recordCounts(org.orgId);

    // Act
    const response = await post(
      '/webhooks/git',
      rawBody,
      gitHeaders(org.secrets.git, rawBody, { delivery }),
      org.orgId,
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      received: true,
      event: 'push',
      duplicate: false,
      actions: [{ type: 'ignored', detail: 'refs/heads/feature/new-logo is not the default branch (main)' }],
    });
    const after = await recordCounts(org.orgId);
    expect(after).toEqual({ ...before, 'WEBHOOKEVENT#': (before['WEBHOOKEVENT#'] as number) + 1 });
  });

  it('answers a signed ping with 200 and records nothing', async () => {
    // Prepare
    const rawBody = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 512300412 });
    const before = await recordCounts(org.orgId);

    // Act
    const response = await post(
      '/webhooks/git',
      rawBody,
      gitHeaders(org.secrets.git, rawBody, { event: 'ping' }),
      org.orgId,
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      received: true,
      event: 'ping',
      duplicate: false,
      actions: [{ type: 'pong', detail: 'The signature is valid; push events will be processed' }],
    });
    expect(await recordCounts(org.orgId)).toEqual(before);
  });

  it('processes a delivery once: a replay answers duplicate and records nothing more', async () => {
    // Prepare
    const rawBody = JSON.stringify(freshPush('git-push-logo'));
    const headers = gitHeaders(org.secrets.git, rawBody);
    const first = await post('/webhooks/git', rawBody, headers, org.orgId);
    const before = await recordCounts(org.orgId);

    // Act
    const replay = await post('/webhooks/git', rawBody, headers, org.orgId);

    // Assess
    expect(first.body.data.duplicate).toBe(false);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ data: { received: true, event: 'push', duplicate: true, actions: [] } });
    expect(await recordCounts(org.orgId)).toEqual(before);
  });

  it('treats the same signed body under a new delivery id as a replay (the delivery header is unsigned)', async () => {
    // Prepare
    const rawBody = JSON.stringify(freshPush('git-push'));
    await post('/webhooks/git', rawBody, gitHeaders(org.secrets.git, rawBody), org.orgId);
    const before = await recordCounts(org.orgId);

    // Act
    const resent = await post('/webhooks/git', rawBody, gitHeaders(org.secrets.git, rawBody), org.orgId);

    // Assess
    expect(resent.body.data.duplicate).toBe(true);
    expect(await recordCounts(org.orgId)).toEqual(before);
  });

  it('stores the accepted payload with emails and tokens redacted', async () => {
    // Prepare
    const push = freshPush('git-push');
    push.installation = { id: 4410021, access_token: 'ghs_sampleInstallationToken0001' };
    const rawBody = JSON.stringify(push);
    const delivery = crypto.randomUUID();

    // Act
    await post('/webhooks/git', rawBody, gitHeaders(org.secrets.git, rawBody, { delivery }), org.orgId);

    // Assess
    const stored = (await itemsOf(org.orgId, 'WEBHOOKEVENT#git#')).find((item) => item.event_id === delivery);
    const text = JSON.stringify(stored);
    expect(stored).toMatchObject({ source: 'git', event: 'push', event_id: delivery });
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain('mira.chen@example.com');
    expect(text).not.toContain('ghs_sampleInstallationToken0001');
    expect((stored?.payload as { pusher?: unknown } | undefined)?.pusher).toEqual({
      name: 'mirachen',
      email: '[REDACTED]',
    });
    expect(stored?.expires_at).toEqual(expect.any(Number));
  });

  describe('answers 401 with one generic message and records nothing', () => {
    const rawBody = JSON.stringify(sample('git-push'));

    it.each([
      ['a signature made with another secret', () => gitHeaders(newWebhookSecret(), rawBody), rawBody, () => org.orgId],
      [
        'a body changed by one byte after signing',
        () => gitHeaders(org.secrets.git, rawBody),
        rawBody.replace('Show queue depth', 'Show queue deptH'),
        () => org.orgId,
      ],
      [
        'no signature header',
        () => ({ 'x-github-event': 'push', 'x-github-delivery': crypto.randomUUID() }),
        rawBody,
        () => org.orgId,
      ],
      [
        'a signature in another scheme',
        () => ({
          ...gitHeaders(org.secrets.git, rawBody),
          'x-hub-signature-256': hmacHex(org.secrets.git, rawBody),
        }),
        rawBody,
        () => org.orgId,
      ],
      ['an unknown organization', () => gitHeaders(org.secrets.git, rawBody), rawBody, () => 'org_doesNotExist123'],
      ['no organization at all', () => gitHeaders(org.secrets.git, rawBody), rawBody, () => undefined],
      [
        'an unsigned body of the wrong shape (verification comes first)',
        () => ({ 'x-github-event': 'push', 'x-github-delivery': crypto.randomUUID() }),
        '{"ref":42}',
        () => org.orgId,
      ],
    ])('for %s', async (_case, headers, body, orgId) => {
      // Prepare
      const before = await recordCounts(org.orgId);

      // Act
      const response = await post('/webhooks/git', body, headers(), orgId());

      // Assess
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
      expect(await recordCounts(org.orgId)).toEqual(before);
    });

    it('for an organization without a git secret', async () => {
      // Prepare
      const bare = await organization(false);

      // Act
      const response = await post('/webhooks/git', rawBody, gitHeaders(bare.secrets.git, rawBody), bare.orgId);

      // Assess
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    });
  });

  it('checks a one-byte change precisely: the same body re-signed is accepted', async () => {
    // Prepare: the one-byte case above must fail on the byte, not on anything else.
    const push = freshPush('git-push');
    const rawBody = JSON.stringify(push);
    const changed = `${rawBody.slice(0, -1)} }`;

    // Act
    const tampered = await post('/webhooks/git', changed, gitHeaders(org.secrets.git, rawBody), org.orgId);
    const resigned = await post('/webhooks/git', changed, gitHeaders(org.secrets.git, changed), org.orgId);

    // Assess
    expect(tampered.status).toBe(401);
    expect(resigned.status).toBe(200);
  });

  it('answers 400 for a signed push of the wrong shape or without a delivery id', async () => {
    // Prepare
    const malformed = JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'a/b' } });
    const valid = JSON.stringify(freshPush('git-push'));
    const { 'x-github-delivery': _dropped, ...withoutDelivery } = gitHeaders(org.secrets.git, valid);

    // Act
    const wrongShape = await post('/webhooks/git', malformed, gitHeaders(org.secrets.git, malformed), org.orgId);
    const noDelivery = await post('/webhooks/git', valid, withoutDelivery, org.orgId);

    // Assess
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body.error.code).toBe('VALIDATION_ERROR');
    expect(wrongShape.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'body.after' }),
        expect.objectContaining({ path: 'body.repository.default_branch' }),
      ]),
    );
    expect(noDelivery.status).toBe(400);
    expect(noDelivery.body.error.details).toEqual([{ path: 'headers.x-github-delivery', message: 'is required' }]);
  });
});

describe('POST /webhooks/deploy', () => {
  it('marks a deployment succeeded on deployment.completed, creating it when unknown', async () => {
    // Prepare
    const event = freshDeployEvent('deploy-completed');
    const rawBody = JSON.stringify(event);

    // Act
    const response = await post(
      '/webhooks/deploy',
      rawBody,
      timestampedHeaders(org.secrets.deploy, rawBody),
      org.orgId,
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        received: true,
        event: 'deployment.completed',
        duplicate: false,
        actions: [{ type: 'deployment.updated', id: event.deployment_id, status: 'succeeded' }],
      },
    });
    const [deployment] = await itemsOf(org.orgId, `DEPLOYMENT#${event.deployment_id}`);
    expect(deployment).toMatchObject({
      id: event.deployment_id,
      status: 'succeeded',
      source: 'deploy_webhook',
      project: 'ops-dashboard',
      environment: 'production',
      commit_sha: event.commit_sha,
      url: event.url,
      error_message: null,
    });
  });

  it('marks a deployment failed, opens an alert and emails the owners and admins on deployment.failed', async () => {
    // Prepare
    const team = await organization();
    const event = freshDeployEvent('deploy-failed');
    const rawBody = JSON.stringify(event);

    // Act
    const response = await post(
      '/webhooks/deploy',
      rawBody,
      timestampedHeaders(team.secrets.deploy, rawBody),
      team.orgId,
    );

    // Assess
    expect(response.status).toBe(200);
    const alertId = response.body.data.actions[1]?.id;
    expect(response.body.data).toEqual({
      received: true,
      event: 'deployment.failed',
      duplicate: false,
      actions: [
        { type: 'deployment.updated', id: event.deployment_id, status: 'failed' },
        { type: 'alert.created', id: expect.stringMatching(/^alt_/), status: 'open' },
        { type: 'team.notified', detail: '2 owner(s) and admin(s) emailed' },
      ],
    });
    const [deployment] = await itemsOf(team.orgId, `DEPLOYMENT#${event.deployment_id}`);
    expect(deployment).toMatchObject({
      status: 'failed',
      error_message: expect.stringContaining('npm run build'),
    });
    expect(await itemsOf(team.orgId, 'ALERT#')).toEqual([
      expect.objectContaining({
        id: alertId,
        type: 'deployment.failed',
        severity: 'error',
        status: 'open',
        deployment_id: event.deployment_id,
      }),
    ]);
    for (const recipient of [team.owner, team.orgAdmin]) {
      expect(outboxFor(recipient.email)).toEqual([
        expect.objectContaining({
          subject: 'Deployment failed: ops-dashboard / production',
          text: expect.stringContaining(`deployment ${event.deployment_id} failed`),
        }),
      ]);
    }
    expect(outboxFor(team.member.email)).toEqual([]);
  });

  it('moves a failed deployment to succeeded when a later attempt completes, clearing the error', async () => {
    // Prepare
    const deploymentId = `dpl_${randomBytes(8).toString('hex')}`;
    const failed = JSON.stringify(freshDeployEvent('deploy-failed', deploymentId));
    await post('/webhooks/deploy', failed, timestampedHeaders(org.secrets.deploy, failed), org.orgId);
    const completed = JSON.stringify(freshDeployEvent('deploy-completed', deploymentId));

    // Act
    await post('/webhooks/deploy', completed, timestampedHeaders(org.secrets.deploy, completed), org.orgId);

    // Assess
    const items = await itemsOf(org.orgId, `DEPLOYMENT#${deploymentId}`);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ status: 'succeeded', error_message: null });
  });

  it('processes an event id once: a replay creates no second alert and sends no second email', async () => {
    // Prepare
    const team = await organization();
    const rawBody = JSON.stringify(freshDeployEvent('deploy-failed'));
    const headers = timestampedHeaders(team.secrets.deploy, rawBody);
    await post('/webhooks/deploy', rawBody, headers, team.orgId);

    // Act
    const replay = await post('/webhooks/deploy', rawBody, headers, team.orgId);

    // Assess
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({
      data: { received: true, event: 'deployment.failed', duplicate: true, actions: [] },
    });
    expect(await itemsOf(team.orgId, 'ALERT#')).toHaveLength(1);
    expect(await itemsOf(team.orgId, 'WEBHOOKEVENT#')).toHaveLength(1);
    expect(outboxFor(team.owner.email)).toHaveLength(1);
  });

  it('accepts timestamps up to five minutes old or ahead and refuses anything further', async () => {
    // Prepare
    const signedAt = (offsetSeconds: number) => {
      const rawBody = JSON.stringify(freshDeployEvent('deploy-completed'));
      return {
        rawBody,
        headers: timestampedHeaders(org.secrets.deploy, rawBody, nowSeconds() + offsetSeconds),
      };
    };
    const cases = {
      oldest: signedAt(-300),
      newest: signedAt(300),
      stale: signedAt(-301),
      future: signedAt(301),
    };

    // Act
    const statuses: Record<string, number> = {};
    for (const [name, { rawBody, headers }] of Object.entries(cases)) {
      const response = await post('/webhooks/deploy', rawBody, headers, org.orgId);
      statuses[name] = response.status;
      if (response.status === 401) expect(response.body).toEqual(UNAUTHORIZED);
    }

    // Assess
    expect(statuses).toEqual({ oldest: 200, newest: 200, stale: 401, future: 401 });
  });

  it('refuses a delivery that was valid when sent but is replayed after the window', async () => {
    // Prepare
    const rawBody = JSON.stringify(freshDeployEvent('deploy-completed'));
    const headers = timestampedHeaders(org.secrets.deploy, rawBody);

    // Act
    clock.advance(6 * 60 * 1000);
    const late = await post('/webhooks/deploy', rawBody, headers, org.orgId);

    // Assess
    expect(late.status).toBe(401);
    expect(late.body).toEqual(UNAUTHORIZED);
  });

  describe('answers 401 with one generic message', () => {
    it.each([
      [
        'a signature made with another secret',
        (body: string) => timestampedHeaders(newWebhookSecret(), body),
        (body: string) => body,
      ],
      [
        'a body changed by one byte after signing',
        (body: string) => timestampedHeaders(org.secrets.deploy, body),
        (body: string) => body.replace('production', 'productioN'),
      ],
      [
        'no timestamp header',
        (body: string) => ({
          'x-webhook-signature': timestampedHeaders(org.secrets.deploy, body)['x-webhook-signature'],
        }),
        (body: string) => body,
      ],
      [
        'no signature header',
        (_body: string) => ({ 'x-webhook-timestamp': String(nowSeconds()) }),
        (body: string) => body,
      ],
      [
        'the signature of another timestamp',
        (body: string) => ({
          ...timestampedHeaders(org.secrets.deploy, body),
          'x-webhook-timestamp': String(nowSeconds() - 1),
        }),
        (body: string) => body,
      ],
    ])('for %s', async (_case, headersFor, sent) => {
      // Prepare
      const rawBody = JSON.stringify(freshDeployEvent('deploy-failed'));
      const before = await recordCounts(org.orgId);

      // Act
      const response = await post('/webhooks/deploy', sent(rawBody), headersFor(rawBody), org.orgId);

      // Assess
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
      expect(await recordCounts(org.orgId)).toEqual(before);
    });

    it('for an unknown organization and for one without a deploy secret', async () => {
      // Prepare
      const bare = await organization(false);
      const rawBody = JSON.stringify(freshDeployEvent('deploy-completed'));

      // Act
      const unknown = await post(
        '/webhooks/deploy',
        rawBody,
        timestampedHeaders(org.secrets.deploy, rawBody),
        'org_nope',
      );
      const noSecret = await post(
        '/webhooks/deploy',
        rawBody,
        timestampedHeaders(bare.secrets.deploy, rawBody),
        bare.orgId,
      );

      // Assess
      expect([unknown.status, noSecret.status]).toEqual([401, 401]);
      expect(unknown.body).toEqual(UNAUTHORIZED);
      expect(noSecret.body).toEqual(UNAUTHORIZED);
    });
  });

  it('does not accept the git secret for deploy events: each source has its own', async () => {
    const rawBody = JSON.stringify(freshDeployEvent('deploy-completed'));
    const response = await post('/webhooks/deploy', rawBody, timestampedHeaders(org.secrets.git, rawBody), org.orgId);
    expect(response.status).toBe(401);
  });

  it('acknowledges event types it does not handle without recording them', async () => {
    // Prepare
    const rawBody = JSON.stringify({
      id: `evt_${randomBytes(8).toString('hex')}`,
      type: 'deployment.started',
    });
    const before = await recordCounts(org.orgId);

    // Act
    const response = await post(
      '/webhooks/deploy',
      rawBody,
      timestampedHeaders(org.secrets.deploy, rawBody),
      org.orgId,
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      received: true,
      event: 'deployment.started',
      duplicate: false,
      actions: [
        {
          type: 'ignored',
          detail: 'deployment.started is not handled; only deployment.completed and deployment.failed are',
        },
      ],
    });
    expect(await recordCounts(org.orgId)).toEqual(before);
  });

  it('answers 400 for a signed event without a deployment id', async () => {
    const rawBody = JSON.stringify({ id: 'evt_nodeployment', type: 'deployment.completed' });
    const response = await post(
      '/webhooks/deploy',
      rawBody,
      timestampedHeaders(org.secrets.deploy, rawBody),
      org.orgId,
    );
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([expect.objectContaining({ path: 'body.deployment_id' })]);
  });
});

describe('POST /webhooks (chat)', () => {
  it('records an open support request and says that no task was created yet', async () => {
    // Prepare
    const message = freshChatMessage();
    const rawBody = JSON.stringify(message);

    // Act
    const response = await post('/webhooks', rawBody, timestampedHeaders(org.secrets.chat, rawBody), org.orgId);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        received: true,
        event: 'chat.message',
        duplicate: false,
        actions: [
          {
            type: 'support_request.created',
            id: expect.stringMatching(/^sup_/),
            status: 'open',
            detail: expect.stringContaining('no task was created'),
          },
        ],
      },
    });
    const [request] = await itemsOf(org.orgId, `SUPPORT#${response.body.data.actions[0].id}`);
    expect(request).toMatchObject({
      status: 'open',
      channel: 'web-widget',
      message_id: message.id,
      customer: { id: 'visitor_58213', name: 'Priya Raman', email: 'priya.raman@example.com' },
      text: message.text,
    });
    const stored = (await itemsOf(org.orgId, 'WEBHOOKEVENT#chat#')).find((item) => item.event_id === message.id);
    const storedText = JSON.stringify(stored);
    expect(storedText).not.toContain('priya.raman@example.com');
    expect(stored?.payload).toMatchObject({
      user: { id: 'visitor_58213', name: 'Priya Raman', email: '[REDACTED]' },
      text: expect.stringContaining('You can reach me at [REDACTED].'),
    });
  });

  it('processes a message id once', async () => {
    // Prepare
    const rawBody = JSON.stringify(freshChatMessage());
    const headers = timestampedHeaders(org.secrets.chat, rawBody);
    await post('/webhooks', rawBody, headers, org.orgId);
    const before = await recordCounts(org.orgId);

    // Act
    const replay = await post('/webhooks', rawBody, headers, org.orgId);

    // Assess
    expect(replay.body).toEqual({
      data: { received: true, event: 'chat.message', duplicate: true, actions: [] },
    });
    expect(await recordCounts(org.orgId)).toEqual(before);
  });

  it('answers 401 for a wrong secret, a stale timestamp or a missing header', async () => {
    // Prepare
    const rawBody = JSON.stringify(freshChatMessage());

    // Act
    const responses = await Promise.all([
      post('/webhooks', rawBody, timestampedHeaders(newWebhookSecret(), rawBody), org.orgId),
      post('/webhooks', rawBody, timestampedHeaders(org.secrets.chat, rawBody, nowSeconds() - 600), org.orgId),
      post('/webhooks', rawBody, { 'x-webhook-timestamp': String(nowSeconds()) }, org.orgId),
      post('/webhooks', undefined, timestampedHeaders(org.secrets.chat, rawBody), org.orgId),
    ]);

    // Assess
    expect(responses.map((response) => response.status)).toEqual([401, 401, 401, 401]);
    for (const response of responses) expect(response.body).toEqual(UNAUTHORIZED);
  });

  it('answers 400 naming the problems of a signed message of the wrong shape', async () => {
    // Prepare
    const message = freshChatMessage();
    message.user = { id: 'visitor_1' };
    message.sent_at = 'yesterday';
    const rawBody = JSON.stringify(message);

    // Act
    const response = await post('/webhooks', rawBody, timestampedHeaders(org.secrets.chat, rawBody), org.orgId);

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(response.body.error.details.map((detail: { path: string }) => detail.path).sort()).toEqual([
      'body.sent_at',
      'body.user.name',
    ]);
  });
});

describe('stored payloads', () => {
  it('keep fields the table could not store as they are (an empty key) instead of failing the event', async () => {
    // Prepare
    const message = freshChatMessage();
    message.metadata = { '': 'unnamed', locale: 'en-GB' };
    const rawBody = JSON.stringify(message);

    // Act
    const response = await post('/webhooks', rawBody, timestampedHeaders(org.secrets.chat, rawBody), org.orgId);

    // Assess
    expect(response.status).toBe(200);
    const stored = (await itemsOf(org.orgId, 'WEBHOOKEVENT#chat#')).find((item) => item.event_id === message.id);
    expect((stored?.payload as { metadata?: unknown } | undefined)?.metadata).toEqual({
      '[EMPTY_KEY]': 'unnamed',
      locale: 'en-GB',
    });
  });
});

describe('GET /deployments', () => {
  it('lists the organization’s deployments newest first, paged', async () => {
    // Prepare
    const team = await organization();
    const ids: string[] = [];
    for (const name of ['first', 'second', 'third']) {
      const rawBody = JSON.stringify(freshDeployEvent('deploy-completed', `dpl_${name}`));
      await post('/webhooks/deploy', rawBody, timestampedHeaders(team.secrets.deploy, rawBody), team.orgId);
      ids.push(`dpl_${name}`);
      clock.advance(1000);
    }

    // Act
    const page = await call(deployments, 'GET', '/deployments', {
      token: team.owner.token,
      query: { limit: '2' },
    });
    const rest = await call(deployments, 'GET', '/deployments', {
      token: team.owner.token,
      query: { limit: '2', offset: '2' },
    });

    // Assess
    expect(page.status).toBe(200);
    expect(page.body.meta).toEqual({ total: 3, limit: 2, offset: 0 });
    expect(page.body.data.map((deployment: { id: string }) => deployment.id)).toEqual(['dpl_third', 'dpl_second']);
    expect(rest.body.data.map((deployment: { id: string }) => deployment.id)).toEqual(['dpl_first']);
    expect(page.body.data[0]).toEqual({
      id: 'dpl_third',
      status: 'succeeded',
      source: 'deploy_webhook',
      repository: null,
      branch: null,
      commit_sha: '4f2a7c9e1b3d5f8a0c6e2b4d7f9a1c3e5b8d0f2a',
      pusher: null,
      project: 'ops-dashboard',
      environment: 'production',
      url: 'https://ops-dashboard-7hq2mx9c.example-hosting.app',
      pipeline_status: null,
      pipeline_id: null,
      pipeline_execution_id: null,
      pipeline_error: null,
      error_message: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(page.body)).not.toMatch(/"pk"|"sk"|"gsi1pk"/);
  });

  it('shows no deployment of another organization and needs a credential', async () => {
    // Prepare
    const stranger = await newUser('stranger');

    // Act
    const theirs = await call(deployments, 'GET', '/deployments', { token: stranger.token });
    const anonymous = await call(deployments, 'GET', '/deployments');

    // Assess
    expect(theirs.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(anonymous.status).toBe(401);
  });
});

describe('secrets', () => {
  it('never appear in a response or a log line, and refusals log their reason', async () => {
    // Prepare
    const lines = captureLogs('DEBUG');
    const push = JSON.stringify(freshPush('git-push-logo'));
    const failed = JSON.stringify(freshDeployEvent('deploy-failed'));
    const chat = JSON.stringify(freshChatMessage());

    // Act
    const responses = [
      await post('/webhooks/git', push, gitHeaders(org.secrets.git, push), org.orgId),
      await post('/webhooks/git', push, gitHeaders(newWebhookSecret(), push), org.orgId),
      await post('/webhooks/deploy', failed, timestampedHeaders(org.secrets.deploy, failed), org.orgId),
      await post(
        '/webhooks/deploy',
        failed,
        timestampedHeaders(org.secrets.deploy, failed, nowSeconds() - 900),
        org.orgId,
      ),
      await post('/webhooks', chat, timestampedHeaders(org.secrets.chat, chat), org.orgId),
      await post('/webhooks', chat, timestampedHeaders(org.secrets.git, chat), org.orgId),
    ];

    // Assess
    expect(responses.map((response) => response.status)).toEqual([200, 401, 200, 401, 200, 401]);
    const logged = lines.join('');
    for (const secret of Object.values(org.secrets)) {
      expect(logged).not.toContain(secret);
      for (const response of responses) expect(response.text).not.toContain(secret);
    }
    expect(logged).not.toContain('jonas.weber@example.com');
    expect(logged).not.toContain('priya.raman@example.com');
    expect(logged).toContain('inbound webhook rejected');
    expect(logged).toContain('bad_signature');
    expect(logged).toContain('stale_timestamp');
  });
});
