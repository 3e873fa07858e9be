/**
 * The two bare Node HTTP servers the throughput bench (bench/throughput.ts) sets beside the gateway, on
 * the same DynamoDB Local and table, each forked in a process of its own:
 *
 * - `single`: the one DynamoDB call of the route and nothing else, no credential, the organization named
 *   by an `x-org` header: GET /api/tasks/{id} one GetItem, GET /api/tasks one Query of the newest tasks,
 *   POST /api/tasks one conditional PutItem of the task.
 * - `floor`: the least a request can do and keep the guarantees (authentication, immediate revocation,
 *   exact rate limits, tenant isolation), with no middleware: the credential checked by one read (an
 *   access token's signature, then one BatchGetItem of its revocation and login markers, user,
 *   membership and organization, as the service reads them; an API key's one GetItem by hash); then, side
 *   by side, the rate-limit UpdateItem (one item per caller and hour, as the service counts) and the
 *   route's own call. Two round trips on the critical path and three calls. A create also takes the
 *   task's id from the organization's counter (beside the rate limit) and writes the task with its
 *   open-title guard in one transaction: ids and open titles stay unique.
 *
 * Answers are `{ data }` JSON. The rate limit's thresholds are lifted as in bench/support/lifted-limits.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { LIFTED_LIMIT } from '#bench/support/lifted-limits';
import { countCalls, reportUsage } from '#bench/support/served';
import { secrets } from '#lib/app/secrets';
import { config } from '#lib/config';
import { sha256 } from '#lib/crypto/secrets';
import { counterKey } from '#lib/db/counters';
import { prefixEnd, type TableKey, tenantPk } from '#lib/db/keys';
import { verifyAccessToken } from '#lib/identity/access-tokens';
import { API_KEY_PREFIX } from '#lib/identity/api-key-format';
import { identityKeys } from '#lib/identity/keys';
import { rateKey } from '#lib/rate-limit/limiter';
import { type TaskFields, taskIndexes, taskKeys, titleKey } from '#lib/tasks/task-keys';

const mode = process.argv[2];
if (mode !== 'single' && mode !== 'floor') throw new Error('usage: serve-bare.ts single|floor');

const TABLE = config.tableName;
const client = new DynamoDBClient({
  region: config.region,
  endpoint: config.dynamoEndpoint,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const calls = countCalls(client);
const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

class Refused extends Error {
  constructor(readonly status: number) {
    super(String(status));
  }
}

/** The organization the credential acts in, after the one read that proves it still holds. */
async function credentialOrg(request: IncomingMessage): Promise<string> {
  const header = request.headers.authorization ?? '';
  const token = header.startsWith('Bearer ') ? header.slice(7) : '';
  const now = new Date();
  if (token.startsWith(API_KEY_PREFIX)) {
    const { Item } = await db.send(new GetCommand({ TableName: TABLE, Key: identityKeys.apiKeyHash(sha256(token)) }));
    const expired = (at: unknown) => typeof at === 'string' && now >= new Date(at);
    if (!Item?.active || expired(Item.grace_until) || expired(Item.key_expires_at)) throw new Refused(401);
    return Item.org_id as string;
  }
  const claims = await verifyAccessToken(secrets.accessTokenKey, token, now).catch(() => {
    throw new Refused(401);
  });
  const keys: TableKey[] = [
    identityKeys.revokedToken(claims.jti),
    identityKeys.user(claims.userId),
    identityKeys.membership(claims.orgId, claims.userId),
    identityKeys.organization(claims.orgId),
    ...(claims.sessionId ? [identityKeys.refreshFamily(claims.sessionId)] : []),
  ];
  const result = await db.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys } } }));
  if (Object.keys(result.UnprocessedKeys ?? {}).length > 0) throw new Refused(503);
  const found = new Map((result.Responses?.[TABLE] ?? []).map((item) => [`${item.pk}|${item.sk}`, item]));
  const [revoked, user, membership, org, family] = keys.map((key) => found.get(`${key.pk}|${key.sk}`));
  if (revoked || family?.revoked || !user || (user.token_version ?? 0) !== claims.tokenVersion) throw new Refused(401);
  if (!membership || !org || org.deleted_at) throw new Refused(401);
  return claims.orgId;
}

/** The rate-limit write: the hour's and the minute's counts (and a route's own), compared with the limits. */
async function countRequest(orgId: string, bucket?: string): Promise<void> {
  const seconds = Math.floor(Date.now() / 1000);
  const hourStart = seconds - (seconds % 3600);
  const minute = Math.floor((seconds - hourStart) / 60);
  const result = await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: rateKey(`org#${orgId}`, hourStart),
      UpdateExpression: `ADD hour_count :one, #minute :one${bucket ? ', #bucket :one' : ''} SET expires_at = :ttl`,
      ExpressionAttributeNames: { '#minute': `m${minute}`, ...(bucket ? { '#bucket': `${bucket}_m${minute}` } : {}) },
      ExpressionAttributeValues: { ':one': 1, ':ttl': hourStart + 7200 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const counts = result.Attributes ?? {};
  const windows = ['hour_count', `m${minute}`, ...(bucket ? [`${bucket}_m${minute}`] : [])];
  if (windows.some((name) => Number(counts[name] ?? 0) > LIFTED_LIMIT)) throw new Refused(429);
}

const getTask = async (orgId: string, id: number) => {
  const { Item } = await db.send(new GetCommand({ TableName: TABLE, Key: taskKeys.byId(orgId, id) }));
  if (!Item) throw new Refused(404);
  return Item;
};

const listTasks = async (orgId: string, limit: number) => {
  const prefix = taskKeys.prefix;
  const { Items } = await db.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix, ':end': prefixEnd(prefix) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items ?? [];
};

function taskItem(orgId: string, id: number, title: string) {
  const at = new Date().toISOString();
  const fields: TaskFields = {
    title,
    description: null,
    status: 'todo',
    priority: 'P2',
    assignee: null,
    product_id: null,
    product_slug: null,
    category: null,
    tags: null,
    type: null,
    estimated_minutes: null,
    due_date: null,
    resolution: null,
    max_duration_seconds: null,
    depends_on: [],
  };
  return { ...taskKeys.byId(orgId, id), ...taskIndexes(orgId, id, fields), ...fields, id, version: 1, created_at: at };
}

const absent = 'attribute_not_exists(pk)';

/** The floor's create: a new id beside the rate limit, then the task and its open-title guard at once. */
async function createTask(orgId: string, title: string, counted: Promise<void>) {
  const [, next] = await Promise.all([
    counted,
    db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: counterKey(taskKeys.counter, tenantPk(orgId)),
        UpdateExpression: 'ADD #value :one',
        ExpressionAttributeNames: { '#value': 'value' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    ),
  ]);
  const item = taskItem(orgId, Number(next.Attributes?.value), title);
  const guard = { ...taskKeys.openTitle(orgId, null, titleKey(title)), task_id: item.id };
  await db.send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: TABLE, Item: item, ConditionExpression: absent } },
        { Put: { TableName: TABLE, Item: guard, ConditionExpression: absent } },
      ],
    }),
  );
  return item;
}

// The single-write server's ids: far above any counter's, so that they never meet a real task's.
let singleId = 10 ** 11 + Math.floor(Math.random() * 10 ** 9);

async function route(request: IncomingMessage, body: string): Promise<{ status: number; data: unknown }> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const byId = /^\/api\/tasks\/(\d+)$/.exec(url.pathname);
  const isList = url.pathname === '/api/tasks';
  if (!byId && !isList) throw new Refused(404);
  const limit = Math.min(100, Number(url.searchParams.get('limit') ?? 20));
  const create = request.method === 'POST' && isList;
  const title = create ? String((JSON.parse(body) as { title?: unknown }).title ?? '') : '';
  if (create && !title) throw new Refused(400);

  if (mode === 'single') {
    const orgId = String(request.headers['x-org'] ?? '');
    if (byId) return { status: 200, data: await getTask(orgId, Number(byId[1])) };
    if (!create) return { status: 200, data: await listTasks(orgId, limit) };
    singleId += 1;
    const item = taskItem(orgId, singleId, title);
    await db.send(new PutCommand({ TableName: TABLE, Item: item, ConditionExpression: absent }));
    return { status: 201, data: item };
  }

  const orgId = await credentialOrg(request);
  if (create) return { status: 201, data: await createTask(orgId, title, countRequest(orgId, 'task_create')) };
  const [, data] = await Promise.all([
    countRequest(orgId),
    byId ? getTask(orgId, Number(byId[1])) : listTasks(orgId, limit),
  ]);
  return { status: 200, data };
}

function answer(response: ServerResponse, status: number, payload: unknown): void {
  const bytes = Buffer.from(JSON.stringify(payload));
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(bytes.length) });
  response.end(bytes);
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    route(request, Buffer.concat(chunks).toString('utf8'))
      .then(({ status, data }) => answer(response, status, { data }))
      .catch((error: unknown) => {
        const status = error instanceof Refused ? error.status : 500;
        if (status === 500) console.error('bare server failed', error);
        answer(response, status, { error: { code: String(status) } });
      });
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => reportUsage(server, calls));
