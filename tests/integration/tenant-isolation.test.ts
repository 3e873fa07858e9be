import { beforeAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '#lib/http/route';
import { allRoutes } from '#lib/routes/index';
import { backupsApi, organizationItems, send as sendToBackups, unpack } from '#tests/support/backups';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { handlerOf, sample, sendTo } from '#tests/support/registry';
import {
  errorOf,
  leaksIn,
  ofA,
  queryFields,
  type Ref,
  routeName,
  stringsIn,
  twin,
  type Variant,
  variantsOf,
} from '#tests/support/tenant-isolation';
import { type SeededOrganization, seedOrganization, sendDeployEvent } from '#tests/support/tenant-seed';

/**
 * Tenant isolation over the whole registry. Organization A holds one record of every kind a path
 * parameter can name (tests/support/tenant-seed.ts), each named with A's marker. Organization B, by its
 * owner's access token, by its API key and by a user who is a member of both acting in B, then:
 *
 * - calls every route that takes a path parameter with A's values, with every method and a valid body:
 *   each answer is 404 in the error envelope, the same as for values nobody has, and shows nothing of A
 *   but the value sent;
 * - calls every GET route without path parameters (lists, search, dashboards, stats, exports), bare and
 *   with A's names, slugs and ids as filters: nothing of A is shown;
 * - names A's records in the bodies of its writes (refused as records nobody has), makes its own records
 *   with A's unique names, slugs, keys and idempotency keys (made, answering nothing of A), and names A as
 *   the organization to act in (403, as for an organization nobody has).
 *
 * A's items are the same afterwards, one for one. Every route parameter and list filter must be mapped
 * here (or listed as not an organization's, with why), so a new route cannot escape.
 */

/** Who calls for B: its owner, its API key, and a member of both organizations acting in B. */
type Caller = 'owner' | 'apiKey' | 'member';
interface Principal {
  name: string;
  caller: Caller;
  headers: Record<string, string>;
}
/** A route (`METHOD /path`) that does not hold for every caller of B: for those named, or all. */
type Exception = { reason: string; callers?: Caller[] };
const appliesTo = (exception: Exception | undefined, principal: Principal) =>
  exception !== undefined && (!exception.callers || exception.callers.includes(principal.caller));

let a: SeededOrganization;
let b: TestUser;
let member: TestUser;
let principals: Principal[];
let before: Awaited<ReturnType<typeof organizationItems>>;
const counts = {
  routes: new Set<string>(),
  pathCalls: 0,
  listCalls: 0,
  ownCalls: 0,
  unknownCalls: 0,
  headerCalls: 0,
  referenceCalls: 0,
  exportCalls: 0,
  controls: 0,
};

/**
 * What each path parameter names, by the path up to and including it (`{id}` alone names a task, a team or
 * a pipeline depending on where it stands): A's values; and B's own organization where a route nests A's
 * record under it (B's organization with A's API key, or A's owner as a member), which must not reach it.
 */
const PARAMETERS: Record<string, () => Ref[]> = {
  '/users/{id}': () => [ofA(a.refs.ownerId)],
  '/organizations/{id}': () => [ofA(a.refs.orgId), { value: b.orgId, of: 'B' }],
  '/organizations/{id}/members/{userId}': () => [ofA(a.refs.ownerId)],
  '/organizations/{orgId}': () => [ofA(a.refs.orgId), { value: b.orgId, of: 'B' }],
  '/organizations/{orgId}/api-keys/{keyId}': () => [ofA(a.refs.apiKeyId)],
  '/teams/{id}': () => [ofA(a.refs.teamId)],
  '/credentials/{key}': () => [ofA(a.refs.credentialKey)],
  '/tenant-config/webhook-deliveries/{id}': () => [ofA(a.refs.deliveryId)],
  '/tasks/{id}': () => [ofA(a.refs.taskId)],
  '/v1/public/tasks/{id}': () => [ofA(a.refs.taskId)],
  '/products/{slug}': () => [ofA(a.refs.productSlug)],
  '/agents/{name}': () => [ofA(a.refs.agentName)],
  '/v1/public/agents/{id}': () => [ofA(a.refs.agentId)],
  '/agent-templates/{idOrSlug}': () => [ofA(a.refs.templateId), ofA(a.refs.templateSlug)],
  '/v1/public/templates/{id}': () => [ofA(a.refs.templateId)],
  '/agent-pipelines/{id}': () => [ofA(a.refs.pipelineId)],
  '/agent-pipelines/{id}/executions/{executionId}': () => [ofA(a.refs.executionId)],
  '/automations/{id}': () => [ofA(a.refs.automationId)],
  '/rules/{id}': () => [ofA(a.refs.ruleId)],
  '/files/{id}': () => [ofA(a.refs.fileId)],
  '/discovery-engines/{slug}': () => [ofA(a.refs.engineSlug)],
  '/backups/{filename}': () => [ofA(a.refs.backupFilename)],
  '/task-queue/{id}': () => [ofA(a.refs.taskQueueJobId)],
  '/job-queue/{queue}': () => [ofA(a.refs.queueName)],
  '/integrations/{id}': () => [ofA(a.refs.integrationId)],
};

/** Routes whose path parameter names no organization's record, so they are not called, each with why. */
const NOT_TENANT_RECORDS: Record<string, string> = {
  // The documentation's static assets: the same for everyone, anonymous.
  'GET /docs/{asset}': 'public documentation assets',
  // The local payments provider's hosted checkout page: anonymous by design, like a hosted checkout URL; the
  // session id is the capability, handed only to the organization that started the checkout.
  'GET /billing/local-checkout/{sessionId}': 'anonymous checkout page; the session id is its capability',
  'POST /billing/local-checkout/{sessionId}/confirm': 'anonymous checkout page; the session id is its capability',
  // The invite token is the capability: it is emailed to the invited address only and no response shows
  // it; whoever holds it may join (the specification's accept). A's invites are checked by their routes.
  'POST /organizations/invites/{token}/accept': 'the emailed invite token is the capability',
  'POST /teams/invites/{token}/accept': 'the emailed invite token is the capability',
  // The built-in pipeline templates are the same in every organization; nothing of A can name one.
  'POST /agent-pipelines/templates/{id}/clone': 'the built-in catalogue, the same in every organization',
};

/**
 * Routes whose parameter is not a record of one organization but a name each organization has its own of:
 * B's answer is about B's own state (2xx) and shows nothing of A.
 */
const OWN_NAMESPACE: Record<string, string> = {
  // The integration catalogue is fixed (git, llm, ...); each organization has its own configuration of it.
  'GET /integrations/{id}/status': 'catalogue id; the answer is B’s own configuration',
  'POST /integrations/{id}/configure': 'catalogue id; the call configures B’s own integration',
  // Queues are names within the organization, not records: an unknown queue lists nothing (documented).
  'GET /job-queue/{queue}/jobs': 'queue names are the organization’s own; an unknown queue lists nothing',
};

/**
 * Routes that answer a caller alike whatever the value: B's answer for A's value must be the one for a value
 * nobody has (no existence oracle).
 */
const SAME_AS_UNKNOWN: Record<string, Exception> = {
  // Instance-admin routes: the instance admin reaches every user by design; anyone else gets 403 for any id.
  'PATCH /users/{id}': { reason: 'instance admin only' },
  'DELETE /users/{id}': { reason: 'instance admin only' },
  // Users are read by users: an API key, which has no user behind it, gets 403 for any id.
  'GET /users/{id}': { reason: 'needs a user behind the credential', callers: ['apiKey'] },
};

/**
 * The organization routes authorize against the organization in their path, not the one the request acts in
 * (documented on each): a member of A manages A by its id whatever X-Organization-Id says, as they could
 * without it. So the member of both is not sent A's organization id there; it is sent A's API keys and A's
 * owner under B's organization, which must not reach them.
 */
const PATH_ORGANIZATION = /^\/organizations\/\{(id|orgId)\}/;

/** Bodies for routes whose `sample(route.body)` is not valid (or would name no real user), by route. */
const BODIES: Record<string, () => unknown> = {
  'POST /organizations/{orgId}/api-keys': () => ({ name: 'bravo probe' }),
  'PATCH /organizations/{orgId}/api-keys/{keyId}': () => ({ name: 'bravo probe' }),
  'POST /organizations/{id}/members': () => ({ user_id: String(b.id), role: 'member' }),
  'POST /organizations/{id}/invites': () => ({ email: 'bravo-probe@example.com' }),
  'POST /teams/{id}/members': () => ({ user_id: b.id, role: 'member' }),
  'POST /teams/{id}/invites': () => ({ email: 'bravo-probe@example.com', role: 'member' }),
  'POST /integrations/{id}/configure': () => ({
    fields: { base_url: 'https://bravo.example.com/v1', api_key: 'bravo-probe-key' },
  }),
  'PATCH /tasks/{id}': () => ({ title: 'bravo probe' }),
  'PATCH /products/{slug}': () => ({ name: 'bravo probe' }),
  'PATCH /agent-pipelines/{id}': () => ({ name: 'bravo probe' }),
  'PATCH /rules/{id}': () => ({ rule: 'bravo probe' }),
  'PATCH /discovery-engines/{slug}': () => ({ name: 'bravo probe' }),
};

/**
 * What B filters lists by, per query field: A's names, slugs, ids and people. A list, a search or a count
 * filtered by a value of A must still show nothing of A.
 */
const FILTERS: Record<string, () => string[]> = {
  q: () => [a.marker, ...a.names],
  search: () => [a.marker, ...a.names],
  name: () => [a.marker, ...a.names],
  product: () => [a.refs.productSlug],
  slug: () => [a.refs.productSlug],
  product_id: () => [String(a.refs.productId)],
  assignee: () => [a.marker],
  assigned_to: () => [a.marker],
  agent: () => [a.refs.agentName],
  agent_name: () => [a.refs.agentName],
  task_id: () => [String(a.refs.taskId)],
  actor_id: () => [`user:${a.refs.ownerId}`],
  action: () => ['isolation.seeded'],
  scope: () => [`agent:${a.refs.agentName}`],
  workspace: () => [a.marker],
};

/** Query fields that name no record (paging, enums, periods), so they keep their defaults. */
const NEUTRAL_QUERY = new Set([
  ...['limit', 'offset', 'page', 'next', 'days'],
  ...['status', 'priority', 'type', 'types', 'category', 'featured', 'role', 'level', 'source', 'actor_type'],
  ...['permanent', 'ext'],
  // Accepted for compatibility and ignored: the ledger is always that of the organization the request acts in.
  'company_id',
]);

/** GET routes without path parameters that are not one organization's view, so are not called, with why. */
const NOT_TENANT_LISTS: Record<string, Exception> = {
  // Asked by schedulers without a credential (the specification's N): the agent's organization and name are
  // its input, and it answers reason codes only; nothing of an organization is reached without both.
  'GET /agent-runs/idle-check': { reason: 'anonymous by specification; names its organization itself' },
  // The organizations the caller is a member of, whatever the request acts in: the member of both sees A.
  'GET /organizations': { reason: 'the caller’s own memberships', callers: ['member'] },
};

/** GET routes without path parameters that refuse a caller of B, whatever A holds, with the status. */
const REFUSED_LISTS: Record<string, Exception & { status: number }> = {
  'GET /users': { status: 403, reason: 'users are listed to users, not API keys', callers: ['apiKey'] },
  'GET /billing/subscription': { status: 404, reason: 'B has no subscription (the specification’s 404)' },
};

/** GET routes that show A's records to A: B's calls to them below must find nothing. */
const SHOWING_A = `
  /activity-log /agent-pipelines /agent-templates /agents /auth/me /automations /backups /backups/logs
  /backups/remote-status /backups/stats /changelog /changelog/feed /changelog/summary /credentials /deployments
  /dashboard/agent-efficiency /dashboard/agent-queue-health /discovery-engines /discovery-engines/efficiency /files
  /files/search /job-queue/stats /logs /organizations /products /rules /search /tasks /teams /tenant-config
  /tenant-config/webhook-deliveries /tokens/balance /tokens/transactions /users /v1/public/agents /v1/public/tasks
  /v1/public/templates`
  .trim()
  .split(/\s+/)
  .map((path) => `GET ${path}`);

interface OwnRecord {
  path: string;
  body: () => Record<string, unknown>;
  /** What the answer's `data` must hold besides a 2xx; any 2xx when not given. */
  holds?: (data: Record<string, unknown> | null) => boolean;
}
const notA = (data: Record<string, unknown> | null) =>
  data?.id !== a.refs.taskQueueJobId && data?.id !== a.refs.jobQueueJobId;

/**
 * B's own records made with A's names, slugs, keys, paths, idempotency keys and references, which are unique
 * within an organization only: B's is made (not a 409 telling that A has one, nor a repeat answering A's),
 * and the answer shows nothing of A but what B sent. In order: the claim comes before B queues a job.
 */
const OWN_WITH_A_VALUES: OwnRecord[] = [
  {
    path: '/task-queue/claim',
    body: () => ({ worker_id: 'bravo-worker', queue_name: a.refs.queueName }),
    holds: (data) => data === null,
  },
  { path: '/products', body: () => ({ name: 'bravo product', slug: a.refs.productSlug }) },
  { path: '/discovery-engines', body: () => ({ name: 'bravo', layer: 'market', slug: a.refs.engineSlug }) },
  { path: '/v1/public/templates', body: () => ({ name: 'bravo template', slug: a.refs.templateSlug }) },
  { path: '/agents', body: () => ({ name: a.refs.agentName }) },
  {
    path: '/agent-pipelines',
    body: () => ({ name: a.unique.pipelineName, stages: [{ name: 'build', agent: a.refs.agentName, depends_on: [] }] }),
  },
  { path: '/credentials', body: () => ({ key: a.refs.credentialKey, value: 'bravo-value' }) },
  { path: '/teams', body: () => ({ name: a.unique.teamName }) },
  { path: '/files', body: () => ({ name: 'bravo.md', path: a.unique.filePath, content: 'bravo' }) },
  { path: '/tasks', body: () => ({ title: a.unique.openTaskTitle }) },
  { path: '/automations', body: () => ({ name: 'b', agent_name: a.refs.agentName, type: 'cron', path: 'b.sh' }) },
  { path: '/rules', body: () => ({ rule: 'bravo rule', scope: `agent:${a.refs.agentName}` }) },
  // A 200 here would be the repeat of an earlier submission with the key: A's.
  {
    path: '/task-queue/submit',
    body: () => ({ task_type: 'bravo', queue_name: a.refs.queueName, idempotency_key: a.unique.taskQueueKey }),
    holds: notA,
  },
  {
    path: '/job-queue/submit',
    body: () => ({ task_type: 'bravo', queue_name: a.refs.queueName, idempotency_key: a.unique.jobQueueKey }),
    holds: notA,
  },
  {
    path: '/tokens/consume',
    body: () => ({ amount: 1, action: 'agent_run', reference_id: a.unique.consumeReference }),
    holds: (data) => data?.duplicate === false,
  },
];

/**
 * B's writes that name one of A's records in their body: each is refused as it is for a record nobody has
 * (4xx, the same status and error but for the value), never taking A's for B's. `v` gives A's value, or for
 * the comparison a value of the same shape nobody has.
 */
type Choose = <T extends string | number>(value: T) => T;
const REFERENCES: Array<{ method: string; path: string; body: (v: Choose) => Record<string, unknown> }> = [
  { method: 'PATCH', path: '/tenant-config', body: (v) => ({ deploy_pipeline_id: v(a.refs.pipelineId) }) },
  { method: 'POST', path: '/tasks', body: (v) => ({ title: 'bravo ref', product_slug: v(a.refs.productSlug) }) },
  { method: 'POST', path: '/tasks', body: (v) => ({ title: 'bravo dep', depends_on: [v(a.refs.taskId)] }) },
  { method: 'POST', path: '/v1/public/tasks', body: (v) => ({ title: 'bravo ref', product_id: v(a.refs.productId) }) },
  { method: 'POST', path: '/v1/public/tasks', body: (v) => ({ title: 'bravo dep', depends_on: [v(a.refs.taskId)] }) },
  {
    method: 'POST',
    path: '/agent-pipelines',
    body: (v) => ({ name: 'bravo ref', stages: [{ name: 'build', agent: v(a.refs.agentName), depends_on: [] }] }),
  },
  {
    method: 'POST',
    path: '/automations',
    body: (v) => ({ name: 'bravo', agent_name: v(a.refs.agentName), type: 'cron', path: 'b.sh' }),
  },
];

const METHOD_ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Routes that take a path parameter naming a record, GETs first and DELETEs last. */
const recordRoutes = () =>
  allRoutes
    .filter((route) => route.path.includes('{') && !NOT_TENANT_RECORDS[routeName(route)])
    .sort((x, y) => METHOD_ORDER.indexOf(x.method) - METHOD_ORDER.indexOf(y.method));

function bodyFor(route: RouteDef): string | undefined {
  const made = BODIES[routeName(route)];
  if (made) return JSON.stringify(made());
  return route.body ? JSON.stringify(sample(route.body) ?? {}) : undefined;
}

async function send(principal: Pick<Principal, 'headers'>, variant: Variant, body?: string) {
  const headers = { ...principal.headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
  return sendTo(variant.route, variant.path, { headers, ...(body !== undefined ? { body } : {}) });
}

/**
 * Why B's answer for A's value is wrong, or undefined when it is right: a 404 in the error envelope, the same
 * (status, code, message and details, but for the value) as the answer for values nobody has.
 */
async function judge(
  variant: Variant,
  principal: Principal,
  response: { status: number; body: string },
): Promise<string | undefined> {
  const name = routeName(variant.route);
  const shown = `${response.status} ${response.body.slice(0, 300)}`;
  if (OWN_NAMESPACE[name]) return response.status < 300 ? undefined : shown;
  const unknown = await send(principal, { ...variant, path: variant.unknownPath }, bodyFor(variant.route));
  counts.unknownCalls += 1;
  let unknownError = JSON.stringify(errorOf(unknown.body));
  for (const value of variant.sent) unknownError = unknownError.split(twin(value)).join(value);
  const same = response.status === unknown.status && JSON.stringify(errorOf(response.body)) === unknownError;
  if (!same) return `${shown}, but for values nobody has ${unknown.status} ${unknown.body.slice(0, 300)}`;
  if (appliesTo(SAME_AS_UNKNOWN[name], principal)) return undefined;
  return response.status === 404 && errorOf(response.body)?.code === 'NOT_FOUND' ? undefined : shown;
}

/** The queries B lists `route` with: bare (unless a field is required), then each filter set to A's values. */
function queriesFor(route: RouteDef): Array<Record<string, string>> {
  const filters = queryFields(route).filter((field) => FILTERS[field]);
  const firsts = filters.map((field) => ({ [field]: FILTERS[field]?.()[0] as string }));
  const rest = filters.flatMap((field) => (FILTERS[field]?.() ?? []).slice(1).map((value) => ({ [field]: value })));
  const bare = route.query?.safeParse({}).success === false ? [] : [{}];
  const queries = [...bare, ...firsts, ...rest];
  // A route with a limit of its own per organization (log reads) gets what B's callers may send in a minute.
  const budget = route.rateLimit ? Math.floor(route.rateLimit.perMinute / principals.length) - 1 : queries.length;
  return queries.slice(0, budget);
}

beforeAll(async () => {
  // The file's first user is the instance admin; A, B and the member of both are ordinary users.
  await newUser('instanceadmin');
  const owner = await newUser('alpha');
  b = await newUser('bravo');
  member = await newUser('both');
  a = await seedOrganization(owner, member);
  const joined = await call(await handlerOf('organizations'), 'POST', `/organizations/${b.orgId}/members`, {
    token: b.token,
    body: { user_id: member.id, role: 'admin' },
  });
  const key = await call(await handlerOf('api-keys'), 'POST', `/organizations/${b.orgId}/api-keys`, {
    token: b.token,
    body: { name: 'bravo key', scopes: ['admin'] },
  });
  if (joined.status !== 201 || key.status !== 201) throw new Error('setting up B failed');
  principals = [
    { name: 'B’s owner (access token)', caller: 'owner', headers: { authorization: `Bearer ${b.token}` } },
    { name: 'B’s API key', caller: 'apiKey', headers: { authorization: `Bearer ${key.body.data.key}` } },
    {
      name: 'a member of A and B acting in B',
      caller: 'member',
      headers: { authorization: `Bearer ${member.token}`, 'x-organization-id': b.orgId },
    },
  ];
}, 60_000);

describe('tenant isolation', () => {
  it('knows what every path parameter and query filter of the registry names', () => {
    // Assess: a new route with a parameter or a filter nobody mapped fails here, by name.
    const unfilled = recordRoutes().flatMap((route) =>
      variantsOf(route, PARAMETERS).unfilled.map((param) => `${routeName(route)}: ${param}`),
    );
    const unfiltered = allRoutes
      .filter((route) => route.method === 'GET' && !route.path.includes('{'))
      .filter((route) => NOT_TENANT_LISTS[routeName(route)]?.callers || !NOT_TENANT_LISTS[routeName(route)])
      .flatMap((route) =>
        queryFields(route)
          .filter((field) => !FILTERS[field] && !NEUTRAL_QUERY.has(field))
          .map((field) => `${routeName(route)}: ?${field}`),
      );
    const listed = [NOT_TENANT_RECORDS, OWN_NAMESPACE, SAME_AS_UNKNOWN, BODIES, NOT_TENANT_LISTS, REFUSED_LISTS]
      .flatMap((table) => Object.keys(table))
      .concat(SHOWING_A);
    const stale = listed.filter((name) => !allRoutes.some((route) => routeName(route) === name));
    expect(unfilled, 'path parameters with no filler in PARAMETERS').toEqual([]);
    expect(unfiltered, 'query fields with neither a filter in FILTERS nor a place in NEUTRAL_QUERY').toEqual([]);
    expect(stale, 'listed routes the registry no longer has').toEqual([]);
  });

  it('reaches A’s records with the values it fills in, as A’s owner and as the member acting in A', async () => {
    // Arrange: the values are right, so B's 404s are about B, not about a wrong path.
    const asA: Array<{ name: string; headers: Record<string, string> }> = [
      { name: 'A’s owner', headers: { authorization: `Bearer ${a.owner.token}` } },
      {
        name: 'the member acting in A',
        headers: { authorization: `Bearer ${member.token}`, 'x-organization-id': a.refs.orgId },
      },
    ];
    const failures: string[] = [];

    // Act
    for (const route of recordRoutes().filter((route) => route.method === 'GET')) {
      const variants = variantsOf(route, PARAMETERS).variants.filter((variant) => !variant.path.includes(b.orgId));
      for (const variant of variants) {
        for (const principal of asA) {
          const response = await send(principal, variant);
          counts.controls += 1;
          if (response.status >= 300) failures.push(`${principal.name}: GET ${variant.path} → ${response.status}`);
        }
      }
    }
    // What B does from here on must leave A as it is now.
    before = await organizationItems(a.refs.orgId);

    // Assess
    expect(failures).toEqual([]);
  });

  it('finds A’s values in A’s own lists and searches, as it would in B’s', async () => {
    // Arrange: the same calls B makes below, as A's owner: the search for A's values must find them.
    const owner = { headers: { authorization: `Bearer ${a.owner.token}` } };
    const showing = new Set<string>();

    // Act
    for (const route of allRoutes.filter((route) => route.method === 'GET' && !route.path.includes('{'))) {
      for (const query of queriesFor(route)) {
        const response = await sendTo(route, `/api${route.path}`, { ...owner, query });
        counts.controls += 1;
        if (leaksIn(response.body, a.identifying, a.marker, Object.values(query)).length > 0) {
          showing.add(routeName(route));
        }
      }
    }
    before = await organizationItems(a.refs.orgId);

    // Assess: at least every list, search, dashboard and export that holds A's records.
    expect([...showing].sort()).toEqual(expect.arrayContaining(SHOWING_A));
  });

  it('answers B 404 for every record of A, by every route and method, showing nothing of A', async () => {
    const failures: string[] = [];
    for (const route of recordRoutes()) {
      for (const variant of variantsOf(route, PARAMETERS).variants) {
        for (const principal of principals) {
          // Arrange
          const inA = variant.path.startsWith(`/api/organizations/${a.refs.orgId}`);
          if (principal.caller === 'member' && PATH_ORGANIZATION.test(route.path) && inA) continue;

          // Act
          const response = await send(principal, variant, bodyFor(route));
          counts.pathCalls += 1;
          counts.routes.add(routeName(route));

          // Assess
          const who = `${principal.name}: ${route.method} ${variant.path}`;
          const problem = await judge(variant, principal, response);
          const leaks = leaksIn(response.body, a.identifying, a.marker, variant.sent);
          if (problem) failures.push(`${who} → ${problem}`);
          if (leaks.length > 0) failures.push(`${who} shows ${leaks.join(', ')}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('shows B nothing of A in any list, search, dashboard, count or export, also filtered by A’s values', async () => {
    const failures: string[] = [];
    for (const route of allRoutes.filter((route) => route.method === 'GET' && !route.path.includes('{'))) {
      for (const principal of principals) {
        // Arrange
        if (appliesTo(NOT_TENANT_LISTS[routeName(route)], principal)) continue;
        const refused = REFUSED_LISTS[routeName(route)];
        const expected = appliesTo(refused, principal) ? refused?.status : undefined;

        for (const query of queriesFor(route)) {
          // Act
          const response = await sendTo(route, `/api${route.path}`, { headers: principal.headers, query });
          counts.listCalls += 1;
          counts.routes.add(routeName(route));

          // Assess
          const who = `${principal.name}: GET ${route.path}?${new URLSearchParams(query)}`;
          const leaks = leaksIn(response.body, a.identifying, a.marker, Object.values(query));
          if (leaks.length > 0) failures.push(`${who} shows ${leaks.join(', ')}`);
          const right = expected === undefined ? response.status < 400 : response.status === expected;
          if (!right) failures.push(`${who} → ${response.status} ${response.body.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses B’s writes that name A’s records in their body as if they were nobody’s', async () => {
    const failures: string[] = [];
    const asA: Choose = (value) => value;
    const asNobody: Choose = (value) =>
      (typeof value === 'number' ? Number(twin(String(value))) : twin(value)) as never;
    for (const reference of REFERENCES) {
      // Arrange
      const route = allRoutes.find((r) => r.method === reference.method && r.path === reference.path) as RouteDef;
      const handler = await handlerOf(route.group);
      const sent = [reference.body(asA), reference.body(asNobody)];

      // Act
      const named = await call(handler, route.method, route.path, { token: b.token, body: sent[0] });
      const nobodys = await call(handler, route.method, route.path, { token: b.token, body: sent[1] });
      counts.referenceCalls += 2;

      // Assess
      const who = `${route.method} ${route.path} ${JSON.stringify(sent[0])}`;
      let expected = JSON.stringify(nobodys.body);
      for (const value of Object.values(a.refs)) expected = expected.split(twin(String(value))).join(String(value));
      const same = named.status === nobodys.status && JSON.stringify(named.body) === expected;
      if (named.status < 400 || named.status >= 500 || !same) {
        failures.push(`${who} → ${named.status} ${JSON.stringify(named.body)}; nobody's: ${expected}`);
      }
      const leaks = leaksIn(JSON.stringify(named.body), a.identifying, a.marker, stringsIn(sent[0]));
      if (leaks.length > 0) failures.push(`${who} shows ${leaks.join(', ')}`);
    }
    expect(failures).toEqual([]);
  });

  it('keeps B’s signed webhooks and B’s backup export to B', async () => {
    // Arrange: B's deploy host signs with B's secret.
    const secret = 'bravo-deploy-secret';
    const configured = await call(await handlerOf('integrations'), 'POST', '/integrations/deploy/configure', {
      token: b.token,
      body: { fields: { api_token: 'bravo-deploy-token', webhook_secret: secret } },
    });
    const event = (id: string) => ({ id, type: 'deployment.failed', deployment_id: a.refs.deploymentId });

    // Act: an event about A's deployment id, sent to B; one signed by B, sent to A and to nobody.
    const aboutA = await sendDeployEvent(b.orgId, secret, event('evt_bravo_1'));
    const toA = await sendDeployEvent(a.refs.orgId, secret, event('evt_bravo_2'));
    const toNobody = await sendDeployEvent(twin(a.refs.orgId), secret, event('evt_bravo_3'));
    const backup = await call(backupsApi().handler, 'POST', '/backups/trigger', { token: b.token });
    const download = await sendToBackups(
      backupsApi().handler,
      'GET',
      `/api/backups/${backup.body.data.filename}/download`,
      b,
    );
    counts.exportCalls += 6;

    // Assess
    expect(configured.status).toBe(200);
    expect(aboutA.status).toBe(200);
    expect(leaksIn(aboutA.body, a.identifying, a.marker, [a.refs.deploymentId])).toEqual([]);
    expect([toA.status, errorOf(toA.body)]).toEqual([401, errorOf(toNobody.body)]);
    expect(download.statusCode).toBe(200);
    const exported = JSON.stringify(unpack(download));
    expect(exported).toContain(b.orgId);
    expect(leaksIn(exported, a.identifying, a.marker, [a.refs.deploymentId])).toEqual([]);
  });

  it('lets B use A’s names, slugs, keys and references for its own records, answering nothing of A', async () => {
    const failures: string[] = [];
    for (const made of OWN_WITH_A_VALUES) {
      // Arrange
      const route = allRoutes.find((route) => route.method === 'POST' && route.path === made.path) as RouteDef;
      const body = made.body();

      // Act
      const response = await call(await handlerOf(route.group), 'POST', made.path, { token: b.token, body });
      counts.ownCalls += 1;

      // Assess
      const sent = stringsIn(body);
      const leaks = leaksIn(JSON.stringify(response.body), a.identifying, a.marker, sent);
      if (response.status >= 300 || !(made.holds?.(response.body.data) ?? true)) {
        failures.push(`POST ${made.path} → ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
      }
      if (leaks.length > 0) failures.push(`POST ${made.path} shows ${leaks.join(', ')}`);
    }
    expect(failures).toEqual([]);
  });

  it('refuses B’s credentials in A alike, whether A exists or not, showing nothing of A', async () => {
    // Arrange: B's owner and B's API key name A as the organization to act in.
    const routes = allRoutes.filter((route) =>
      ['GET /tasks', 'GET /tasks/{id}', 'GET /search'].includes(routeName(route)),
    );
    const failures: string[] = [];

    for (const route of routes) {
      for (const principal of principals.filter((principal) => principal.caller !== 'member')) {
        const path = `/api${route.path.replace('{id}', String(a.refs.taskId))}`;
        const query = route.path === '/search' ? { q: a.marker } : undefined;
        const asIn = (orgId: string) => ({ headers: { ...principal.headers, 'x-organization-id': orgId }, query });

        // Act
        const inA = await sendTo(route, path, asIn(a.refs.orgId));
        const inNobody = await sendTo(route, path, asIn(twin(a.refs.orgId)));
        counts.headerCalls += 2;

        // Assess
        const who = `${principal.name} in A: GET ${path}`;
        const same = inA.status === inNobody.status && inA.body === inNobody.body;
        if (inA.status !== 403 || !same)
          failures.push(`${who} → ${inA.status} ${inA.body}; nobody's: ${inNobody.body}`);
        const leaks = leaksIn(inA.body, a.identifying, a.marker);
        if (leaks.length > 0) failures.push(`${who} shows ${leaks.join(', ')}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('leaves every item of A as it was', async () => {
    // Assess: A's partitions and lookups, item for item, against the snapshot taken before B's calls.
    const after = await organizationItems(a.refs.orgId);
    expect(after).toEqual(before);
    const cases = [
      `${counts.pathCalls} calls with A's values in the path (and ${counts.unknownCalls} with values nobody has)`,
      `${counts.listCalls} list and search calls`,
      `${counts.referenceCalls} writes naming A's records in the body`,
      `${counts.ownCalls} creations with A's unique names and keys`,
      `${counts.headerCalls} calls naming A as the organization`,
      `${counts.exportCalls} signed webhook and backup calls`,
    ];
    console.info(
      `tenant isolation: ${counts.routes.size} routes covered; B made ${cases.join(', ')}; ` +
        `${counts.controls} control calls as A`,
    );
  });
});
