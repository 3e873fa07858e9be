import { createHmac, randomBytes } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import { allRoutes } from '#lib/routes/index';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { handlerOf } from '#tests/support/registry';

/**
 * The records the fuzzing suite's callers own, so that its requests may name real ids and reach the code
 * behind the lookup; the signatures of the inbound webhooks; and the table as a whole, to show that no
 * rejected request changed anything.
 */

/** An ordinary user in their own organization, with one record of each kind the routes name by id. */
export interface FuzzCaller {
  user: TestUser;
  /**
   * Real values by the path up to and including a parameter (`/tasks/{id}` → `12`): a route whose path
   * begins with that prefix may name the record (GET /tasks/{id}, POST /tasks/{id}/…).
   */
  realIds: Map<string, string>;
  /** The signing secrets of the organization's inbound webhooks. */
  secrets: { git: string; deploy: string; chat: string };
}

async function request(user: TestUser, method: string, template: string, path: string, body?: unknown) {
  const def = allRoutes.find((route) => route.method === method && route.path === template);
  if (!def) throw new Error(`no route ${method} ${template}`);
  const response = await call(await handlerOf(def.group), method, path, {
    token: user.token,
    ...(body !== undefined ? { body } : {}),
  });
  if (response.status >= 300) {
    throw new Error(`fixture ${method} ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return response.body.data;
}

/** Registers an ordinary user (the file's first user must already exist) and creates their records. */
export async function fuzzCaller(prefix: string): Promise<FuzzCaller> {
  const user = await newUser(prefix);
  const org = user.orgId;
  const post = (template: string, body?: unknown, path = template) => request(user, 'POST', template, path, body);
  const get = (template: string) => request(user, 'GET', template, template);
  const ids = new Map<string, string>();

  ids.set('/users/{id}', String(user.id));
  for (const prefix of ['/organizations/{id}', '/organizations/{orgId}']) ids.set(prefix, org);
  ids.set('/organizations/{id}/members/{userId}', String(user.id));
  const product = await post('/products', { name: 'Fuzz product', slug: 'fuzz-product' });
  ids.set('/products/{slug}', product.slug);
  const task = await post('/tasks', { title: 'Fuzz task', product_slug: product.slug });
  for (const prefix of ['/tasks/{id}', '/v1/public/tasks/{id}']) ids.set(prefix, String(task.id));
  const agent = { name: 'fuzz-agent' };
  await post('/agents', agent);
  ids.set('/agents/{name}', agent.name);
  const publicAgent = await post('/v1/public/agents', { name: 'fuzz-public-agent', role: 'Fuzzing' });
  ids.set('/v1/public/agents/{id}', String(publicAgent.id));
  const rule = await post('/rules', { rule: 'Fuzz rule' });
  ids.set('/rules/{id}', String(rule.id));
  const credential = await post('/credentials', {
    key: 'fuzz.token',
    value: `fuzz-${randomBytes(12).toString('hex')}`,
  });
  ids.set('/credentials/{key}', credential.key);
  const team = await post('/teams', { name: 'Fuzz team' });
  ids.set('/teams/{id}', String(team.id));
  const apiKeyPath = `/organizations/${org}/api-keys`;
  const apiKey = await post('/organizations/{orgId}/api-keys', { name: 'Fuzz key', scopes: ['read'] }, apiKeyPath);
  ids.set('/organizations/{orgId}/api-keys/{keyId}', String(apiKey.id));
  const pipeline = await post('/agent-pipelines', {
    name: 'Fuzz pipeline',
    stages: [{ name: 'a', agent: agent.name }],
  });
  ids.set('/agent-pipelines/{id}', String(pipeline.id));
  const automation = await post('/automations', {
    name: 'Fuzz automation',
    agent_name: agent.name,
    type: 'schedule',
    path: 'scripts/fuzz.sh',
  });
  ids.set('/automations/{id}', String(automation.id));
  const file = await post('/files', { name: 'fuzz.md', path: 'docs/fuzz.md', content: 'fuzz' });
  ids.set('/files/{id}', String(file.id));
  const engine = await post('/discovery-engines', { name: 'Fuzz engine', layer: 'market', slug: 'fuzz-engine' });
  ids.set('/discovery-engines/{slug}', engine.slug);
  const template = await post('/v1/public/templates', { name: 'Fuzz template', slug: 'fuzz-template' });
  ids.set('/v1/public/templates/{id}', String(template.id));
  ids.set('/agent-templates/{idOrSlug}', template.slug);
  const job = await post('/task-queue/submit', { task_type: 'fuzz' });
  ids.set('/task-queue/{id}', job.id);
  ids.set('/job-queue/{queue}', 'default');
  const backup = await post('/backups/trigger');
  ids.set('/backups/{filename}', backup.filename);
  const [pipelineTemplate] = await get('/agent-pipelines/templates');
  ids.set('/agent-pipelines/templates/{id}', pipelineTemplate.id);
  const [integration] = await get('/integrations');
  ids.set('/integrations/{id}', integration.id);

  const secrets = { git: secret(), deploy: secret(), chat: secret() };
  for (const [source, value] of Object.entries(secrets)) {
    await post('/credentials', { key: `webhook.${source}.secret`, value });
  }
  return { user, realIds: ids, secrets };
}

const secret = () => `whsec_${randomBytes(24).toString('hex')}`;
const hmacHex = (key: string, message: string) => createHmac('sha256', key).update(message, 'utf8').digest('hex');

/**
 * The headers that sign an inbound webhook's raw body with the organization's secret, in each source's
 * format (the git host's `X-Hub-Signature-256`, the timestamped `v1=` of the others), or undefined for a
 * signed route this suite cannot sign (the payment provider's, whose secret is the deployment's).
 */
export function signatureHeaders(
  path: string,
  secrets: FuzzCaller['secrets'],
  rawBody: string,
): Record<string, string> | undefined {
  if (path === '/webhooks/git') {
    return {
      'x-github-event': 'push',
      'x-github-delivery': randomBytes(8).toString('hex'),
      'x-hub-signature-256': `sha256=${hmacHex(secrets.git, rawBody)}`,
    };
  }
  const source = path === '/webhooks/deploy' ? 'deploy' : path === '/webhooks' ? 'chat' : undefined;
  if (!source) return undefined;
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    'x-webhook-timestamp': timestamp,
    'x-webhook-signature': `v1=${hmacHex(secrets[source], `${timestamp}.${rawBody}`)}`,
  };
}

export type TableItem = Record<string, unknown> & { pk: string; sk: string };

/**
 * Every item of the table, of every organization and none, keyed `pk|sk`, but the one kind every request
 * changes: the rate-limit windows (`RATE#…`), which count each request, refused ones included
 * (lib/rate-limit/limiter.ts), and say nothing of the records a request may change. Nothing else is left
 * out: the login throttles (`THROTTLE#…`) count failed password checks, which a malformed login never
 * reaches; the metrics and activity counters change in the same write as what they count; and API key
 * uses are recorded for API keys, which the suite does not present.
 */
export async function tableSnapshot(): Promise<Map<string, string>> {
  const items = new Map<string, string>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({ TableName: TABLE, ExclusiveStartKey: startKey, ConsistentRead: true }),
    );
    for (const item of (page.Items ?? []) as TableItem[]) {
      if (item.pk.startsWith('RATE#')) continue;
      items.set(`${item.pk}|${item.sk}`, stableJson(item));
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** JSON with object keys sorted at every level and sets as sorted arrays, so equal items read the same. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_, field: unknown) => {
    if (field instanceof Set) return [...field].sort();
    if (field && typeof field === 'object' && !Array.isArray(field) && !(field instanceof Uint8Array)) {
      return Object.fromEntries(Object.entries(field).sort(([a], [b]) => a.localeCompare(b)));
    }
    return field;
  });
}

/** What changed between two snapshots: items added, removed or changed, with their keys. */
export function tableChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [key, item] of after) {
    const old = before.get(key);
    if (old === undefined) changes.push(`added ${key}: ${item.slice(0, 300)}`);
    else if (old !== item) changes.push(`changed ${key}: ${old.slice(0, 300)} → ${item.slice(0, 300)}`);
  }
  for (const key of before.keys()) if (!after.has(key)) changes.push(`removed ${key}`);
  return changes;
}
