import { createHmac } from 'node:crypto';
import { loadEvent } from '#tests/support/events';
import { type CallOptions, type CallResult, call, type TestUser } from '#tests/support/identity';
import { handlerOf, sendTo } from '#tests/support/registry';

/**
 * An organization with one record of every kind a path parameter can name, made through the API by its
 * owner: for the suites that check what another organization can reach. Every name, slug, path, URL and
 * text of it contains `marker` (the owner's username, which also names the organization), so a response
 * that shows any of them is found by a substring search.
 */
export interface SeededOrganization {
  owner: TestUser;
  /** A raw API key of the organization (admin scope). */
  apiKey: string;
  marker: string;
  /** The value each kind of record is reached by in a path: ids, slugs, names, keys, file names. */
  refs: {
    orgId: string;
    ownerId: number;
    memberId: number;
    apiKeyId: string;
    taskId: number;
    productId: number;
    productSlug: string;
    agentName: string;
    agentId: number;
    templateId: number;
    templateSlug: string;
    pipelineId: number;
    executionId: number;
    credentialKey: string;
    deliveryId: string;
    teamId: number;
    automationId: number;
    ruleId: number;
    fileId: number;
    engineSlug: string;
    backupFilename: string;
    taskQueueJobId: string;
    jobQueueJobId: string;
    queueName: string;
    integrationId: string;
    deploymentId: string;
  };
  /** Values unique within the organization that another may use for its own records. */
  unique: {
    openTaskTitle: string;
    pipelineName: string;
    teamName: string;
    filePath: string;
    taskQueueKey: string;
    jobQueueKey: string;
    consumeReference: string;
  };
  /** The names and texts its records were given, to search for. */
  names: string[];
  /** Every value of the organization that identifies it or its records and is long enough to search for. */
  identifying: string[];
}

type Answer = { status: number; body: CallResult['body'] };

async function send(group: string, method: string, path: string, options: CallOptions): Promise<Answer> {
  return call(await handlerOf(group), method, path, options);
}

/** The answer's `data`, or a failure naming the request that did not succeed. */
// biome-ignore lint/suspicious/noExplicitAny: records of every shape
async function made(answer: Promise<Answer>, what: string): Promise<any> {
  const { status, body } = await answer;
  if (status >= 300) throw new Error(`seeding ${what} failed: ${status} ${JSON.stringify(body)}`);
  return body?.data;
}

/**
 * Seeds `owner`'s organization. `member` joins it as an admin (and a team of it), so that the organization
 * has a member besides its owner.
 */
export async function seedOrganization(owner: TestUser, member: TestUser): Promise<SeededOrganization> {
  const marker = owner.username.toLowerCase();
  const as = (body?: unknown): CallOptions => ({ token: owner.token, ...(body === undefined ? {} : { body }) });
  const orgId = owner.orgId;

  await made(
    send('organizations', 'POST', `/organizations/${orgId}/members`, as({ user_id: member.id, role: 'admin' })),
    'a member',
  );
  await made(
    send('organizations', 'POST', `/organizations/${orgId}/invites`, as({ email: `${marker}-invitee@example.com` })),
    'an organization invite',
  );
  const key = await made(
    send('api-keys', 'POST', `/organizations/${orgId}/api-keys`, as({ name: `${marker}-key`, scopes: ['admin'] })),
    'an API key',
  );
  const product = await made(send('products', 'POST', '/products', as({ name: `${marker} product` })), 'a product');
  const task = await made(
    send('tasks', 'POST', '/tasks', as({ title: `${marker} task`, product_slug: product.slug, assignee: marker })),
    'a task',
  );
  // An open task of no product: another organization's task of that title is no duplicate of it.
  const looseEnd = await made(send('tasks', 'POST', '/tasks', as({ title: `${marker} loose end` })), 'a task');
  // A finished task: the changelog lists what got done.
  const finished = await made(send('tasks', 'POST', '/tasks', as({ title: `${marker} shipped` })), 'a task');
  for (const status of ['in_progress', 'done']) {
    await made(send('tasks', 'PATCH', `/tasks/${finished.id}`, as({ status })), `a task ${status}`);
  }
  const agent = await made(
    send('agents', 'POST', '/agents', as({ name: `${marker}-agent`, display_name: `${marker} agent` })),
    'an agent',
  );
  const template = await made(
    send('agent-templates', 'POST', '/v1/public/templates', as({ name: `${marker} template`, slug: `${marker}-tpl` })),
    'a template',
  );
  const pipeline = await made(
    send(
      'agent-pipelines',
      'POST',
      '/agent-pipelines',
      as({ name: `${marker} pipeline`, stages: [{ name: 'build', agent: agent.agent.name, depends_on: [] }] }),
    ),
    'a pipeline',
  );
  const execution = await made(
    send('agent-pipelines', 'POST', `/agent-pipelines/${pipeline.id}/execute`, as({ inputs: { note: marker } })),
    'an execution',
  );
  const credentialKey = `${marker}.token`;
  await made(
    send('credentials', 'POST', '/credentials', as({ key: credentialKey, value: `${marker}-credential-value` })),
    'a credential',
  );
  const integrationId = 'llm';
  await made(
    send(
      'integrations',
      'POST',
      `/integrations/${integrationId}/configure`,
      as({ fields: { base_url: `https://${marker}.example.com/v1`, api_key: `${marker}-llm-key` } }),
    ),
    'an integration',
  );
  await made(
    send(
      'tenant-config',
      'PATCH',
      '/tenant-config',
      as({ webhooks: { task_completed: `https://${marker}.example.com/hook` }, deploy_pipeline_id: pipeline.id }),
    ),
    'outbound webhooks',
  );
  const delivery = await made(
    send('tenant-config', 'POST', '/tenant-config/webhooks/test', as({ event: 'task_completed' })),
    'a webhook delivery',
  );
  const team = await made(
    send('teams', 'POST', '/teams', as({ name: `${marker} team`, description: `${marker} people` })),
    'a team',
  );
  await made(
    send('teams', 'POST', `/teams/${team.id}/members`, as({ user_id: member.id, role: 'member' })),
    'a team member',
  );
  await made(
    send('teams', 'POST', `/teams/${team.id}/invites`, as({ email: `${marker}-teammate@example.com`, role: 'member' })),
    'a team invite',
  );
  const automation = await made(
    send(
      'automations',
      'POST',
      '/automations',
      as({ name: `${marker} automation`, agent_name: agent.agent.name, type: 'cron', path: `${marker}/run.sh` }),
    ),
    'an automation',
  );
  const rule = await made(
    send('rules', 'POST', '/rules', as({ rule: `${marker} rule: test before merging`, scope: 'universal' })),
    'a rule',
  );
  const file = await made(
    send('files', 'POST', '/files', as({ name: `${marker}.md`, path: `${marker}/notes.md`, content: `# ${marker}` })),
    'a file',
  );
  const engine = await made(
    send('discovery-engines', 'POST', '/discovery-engines', as({ name: `${marker} engine`, layer: 'market' })),
    'a discovery engine',
  );
  await made(send('discovery-engines', 'POST', `/discovery-engines/${engine.slug}/run`, as()), 'a discovery run');
  const queueName = `${marker}-queue`;
  const queued = await made(
    send(
      'task-queue',
      'POST',
      '/task-queue/submit',
      as({ task_type: `${marker}-work`, queue_name: queueName, idempotency_key: `${marker}-task-once` }),
    ),
    'a task queue job',
  );
  const job = await made(
    send(
      'job-queue',
      'POST',
      '/job-queue/submit',
      as({ task_type: `${marker}-job`, queue_name: queueName, idempotency_key: `${marker}-job-once` }),
    ),
    'a job queue job',
  );
  await made(send('logs', 'POST', '/logs', as({ agent: agent.agent.name, message: `${marker} log line` })), 'a log');
  await made(
    send(
      'activity-log',
      'POST',
      '/activity-log',
      as({ actor_type: 'system', actor_id: 'system', action: 'isolation.seeded', entity_id: marker }),
    ),
    'an activity entry',
  );
  await made(
    send('tokens', 'POST', '/tokens/consume', as({ amount: 5, action: 'agent_run', reference_id: `${marker}-ref` })),
    'a token consumption',
  );
  const deploymentId = await seedDeployment(orgId, marker, (body) =>
    send('integrations', 'POST', '/integrations/deploy/configure', as(body)),
  );
  const backup = await made(send('backups', 'POST', '/backups/trigger', as()), 'a backup');
  // A use of the API key, so that its usage log has an entry.
  await made(send('tasks', 'GET', `/tasks/${task.id}`, { token: key.key }), 'a use of the API key');

  const refs = {
    orgId,
    ownerId: owner.id,
    memberId: member.id,
    apiKeyId: key.id,
    taskId: task.id,
    productId: product.id,
    productSlug: product.slug,
    agentName: agent.agent.name,
    agentId: agent.agent.id,
    templateId: template.id,
    templateSlug: template.slug,
    pipelineId: pipeline.id,
    executionId: execution.id,
    credentialKey,
    deliveryId: delivery.id,
    teamId: team.id,
    automationId: automation.id,
    ruleId: rule.id,
    fileId: file.id,
    engineSlug: engine.slug,
    backupFilename: backup.filename,
    taskQueueJobId: queued.id,
    jobQueueJobId: job.id,
    queueName,
    integrationId,
    deploymentId,
  };
  const identifying = [
    marker,
    owner.email,
    orgId,
    key.id,
    key.masked_key,
    delivery.id,
    backup.filename,
    queued.id,
    job.id,
    deploymentId,
  ];
  const names = [
    product.name,
    task.title,
    looseEnd.title,
    finished.title,
    agent.agent.name,
    template.name,
    pipeline.name,
    team.name,
    automation.name,
    rule.rule,
    file.name,
    engine.name,
    credentialKey,
    queueName,
    `${marker} log line`,
  ];
  const unique = {
    openTaskTitle: looseEnd.title,
    pipelineName: pipeline.name,
    teamName: team.name,
    filePath: file.path,
    taskQueueKey: `${marker}-task-once`,
    jobQueueKey: `${marker}-job-once`,
    consumeReference: `${marker}-ref`,
  };
  return { owner, apiKey: key.key, marker, refs, unique, names, identifying };
}

/**
 * A deployment, as the hosting provider reports one: the organization's deploy integration gets a webhook
 * secret, and a `deployment.completed` event signed with it records the deployment. Answers its id.
 */
async function seedDeployment(
  orgId: string,
  marker: string,
  configure: (body: unknown) => Promise<Answer>,
): Promise<string> {
  const secret = `${marker}-deploy-secret`;
  await made(configure({ fields: { api_token: `${marker}-deploy-token`, webhook_secret: secret } }), 'a deploy host');
  const deploymentId = `dpl_${marker}`;
  const answer = await sendDeployEvent(orgId, secret, {
    id: `evt_${marker}`,
    deployment_id: deploymentId,
    project: `${marker}-project`,
    url: `https://${marker}.example-hosting.app`,
  });
  if (answer.status !== 200) throw new Error(`seeding a deployment failed: ${answer.status} ${answer.body}`);
  return deploymentId;
}

/**
 * POST /webhooks/deploy?org=`orgId`: the sample `deployment.completed` event with `fields` changed, signed
 * with `secret` (`X-Webhook-Signature: v1=<hex HMAC-SHA256 of "timestamp.body">`).
 */
export async function sendDeployEvent(orgId: string, secret: string, fields: Record<string, unknown>) {
  const body = JSON.stringify({ ...loadEvent<Record<string, unknown>>('webhooks/deploy-completed'), ...fields });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return sendTo({ group: 'webhooks', method: 'POST' }, '/api/webhooks/deploy', {
    body,
    query: { org: orgId },
    headers: {
      'content-type': 'application/json',
      'x-webhook-timestamp': timestamp,
      'x-webhook-signature': `v1=${signature}`,
    },
  });
}
