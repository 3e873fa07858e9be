import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '#lib/http/route';
import { allRoutes } from '#lib/routes/index';
import { type CallResult, call, newUser, type TestUser } from '#tests/support/identity';
import { type Item, integrityProblems, scanTable } from '#tests/support/integrity';
import { handlerOf } from '#tests/support/registry';

/**
 * Every create route of the registry, sent the same request ten times at once, as a client that
 * retries on a timeout or a double click does. What each route must do follows from its resource:
 *
 * - `one`: the request names something unique (a slug, a name, an email, a membership): exactly one
 *   success and nine 409 CONFLICT in the error envelope, and one record stored;
 * - `each`: nothing in it is unique, or the unique part is generated (a slug from a name): ten
 *   successes, ten distinct records (and slugs), ten stored;
 * - `same`: the request is idempotent (a key, an idempotency key): ten successes that all name the one
 *   record stored.
 *
 * Afterwards the whole table is read and held against the invariants the transactions keep
 * (tests/support/integrity.ts): no guard without its record, no record without its guard, every count
 * equal to what it counts. A route that creates and is not listed here fails the first test, so a new
 * create route cannot go unraced.
 */
const RACERS = 10;

type Expectation = 'one' | 'each' | 'same';

interface Prepared {
  path: string;
  body: Record<string, unknown>;
  /** The caller; anonymous when absent (registration). */
  token?: string;
}

interface CreateCase {
  /** `METHOD path` of the registry route. */
  route: string;
  variant: string;
  expect: Expectation;
  /** The one request all racers send, built beforehand with whatever it needs to exist. */
  prepare: (owner: TestUser) => Promise<Prepared>;
  /** How many records the race left for this request, counted in the whole table. */
  stored: (items: Item[], owner: TestUser, prepared: Prepared) => number;
  /** What tells the records of the answers apart; `data.id` by default. */
  idOf?: (data: Record<string, unknown>) => unknown;
}

/**
 * The routes that create without answering 201: POST /agents answers the steps of its bootstrap with 200;
 * a payment intent and an integration's settings are created or found again with 200.
 */
const CREATES_WITHOUT_201 = [
  'POST /agents',
  'POST /billing/create-payment-intent',
  'POST /integrations/{id}/configure',
];

const keyOf = (route: Pick<RouteDef, 'method' | 'path'>) => `${route.method} ${route.path}`;
const routeKeys = new Set(allRoutes.map(keyOf));
/** `/v1/…` copies of a route (`/v1/tasks` of `/tasks`) run its code: the original's case covers them. */
const isAlias = (route: RouteDef) =>
  route.path.startsWith('/v1/') && routeKeys.has(`${route.method} ${route.path.slice(3)}`);
const createRoutes = allRoutes.filter(
  (route) =>
    route.method === 'POST' && !isAlias(route) && (route.status === 201 || CREATES_WITHOUT_201.includes(keyOf(route))),
);

const T = (orgId: string) => `T#${orgId}`;
/** Items of a partition whose sort key begins with `prefix`. */
const count = (items: Item[], pk: string, prefix: string, also: (item: Item) => boolean = () => true) =>
  items.filter((item) => item.pk === pk && String(item.sk).startsWith(prefix) && also(item)).length;
const pad = (id: number) => String(id).padStart(12, '0');

let seq = 0;
/** A value no other case (or run) uses. */
const fresh = (prefix: string) => {
  seq += 1;
  return `${prefix}${seq}${Math.random().toString(36).slice(2, 6)}`;
};

async function ok(response: Promise<CallResult>): Promise<CallResult> {
  const answer = await response;
  if (answer.status >= 300) throw new Error(`setup call failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}

const post = async (group: string, path: string, token: string, body: Record<string, unknown>) =>
  ok(call(await handlerOf(group), 'POST', path, { token, body }));

/** A user who is a member of `owner`'s organization, added through the endpoint (so it is counted). */
async function memberOf(owner: TestUser): Promise<TestUser> {
  const member = await newUser('member');
  await post('organizations', `/organizations/${owner.orgId}/members`, owner.token, {
    user_id: String(member.id),
    role: 'member',
  });
  return member;
}

const CASES: CreateCase[] = [
  {
    route: 'POST /auth/register',
    variant: 'one username and email',
    expect: 'one',
    prepare: async () => {
      const username = fresh('racer');
      return {
        path: '/auth/register',
        body: {
          username,
          email: `${username}@example.com`,
          password: 'correct horse battery',
          terms_accepted: true,
          privacy_accepted: true,
        },
      };
    },
    stored: (items, _owner, { body }) => items.filter((item) => item.sk === 'USER' && item.email === body.email).length,
    idOf: (data) => (data.user as { id: number } | undefined)?.id ?? data.id,
  },
  {
    route: 'POST /organizations',
    variant: 'an explicit slug',
    expect: 'one',
    prepare: async () => ({ path: '/organizations', body: { name: 'Race Corp', slug: fresh('race-corp-') } }),
    stored: (items, _owner, { body }) => items.filter((item) => item.sk === 'ORG' && item.slug === body.slug).length,
  },
  {
    route: 'POST /organizations',
    variant: 'a generated slug',
    expect: 'each',
    prepare: async () => ({ path: '/organizations', body: { name: fresh('Generated Corp ') } }),
    stored: (items, owner) =>
      items.filter((item) => item.sk === 'ORG' && item.owner_id === owner.id && !item.personal).length,
    idOf: (data) => data.slug,
  },
  {
    route: 'POST /organizations/{id}/members',
    variant: 'one user',
    expect: 'one',
    prepare: async (owner) => {
      const other = await newUser('joiner');
      return { path: `/organizations/${owner.orgId}/members`, body: { user_id: String(other.id), role: 'member' } };
    },
    stored: (items, owner, { body }) => count(items, T(owner.orgId), `MEMBER#${pad(Number(body.user_id))}`),
    idOf: (data) => data.user_id,
  },
  {
    route: 'POST /organizations/{id}/invites',
    variant: 'one address',
    expect: 'one',
    prepare: async (owner) => ({
      path: `/organizations/${owner.orgId}/invites`,
      body: { email: `${fresh('invitee')}@example.com`, role: 'member' },
    }),
    stored: (items, owner) => count(items, T(owner.orgId), 'INVITE#'),
  },
  {
    route: 'POST /organizations/{orgId}/api-keys',
    variant: 'one name (names repeat)',
    expect: 'each',
    prepare: async (owner) => ({
      path: `/organizations/${owner.orgId}/api-keys`,
      body: { name: 'ci', scopes: ['read'] },
    }),
    stored: (items, owner) => count(items, T(owner.orgId), 'APIKEY#'),
  },
  {
    route: 'POST /teams',
    variant: 'one name (names repeat)',
    expect: 'each',
    prepare: async () => ({ path: '/teams', body: { name: 'Platform' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'TEAM#'),
  },
  {
    route: 'POST /teams/{id}/members',
    variant: 'one user',
    expect: 'one',
    prepare: async (owner) => {
      const team = await post('teams', '/teams', owner.token, { name: 'Crew' });
      const member = await memberOf(owner);
      return { path: `/teams/${team.body.data.id}/members`, body: { user_id: member.id, role: 'member' } };
    },
    stored: (items, owner, { path, body }) =>
      count(items, T(owner.orgId), `TEAMMEMBER#${pad(Number(path.split('/')[2]))}#${pad(Number(body.user_id))}`),
    idOf: (data) => data.user_id,
  },
  {
    route: 'POST /teams/{id}/invites',
    variant: 'one address',
    expect: 'one',
    prepare: async (owner) => {
      const team = await post('teams', '/teams', owner.token, { name: 'Crew' });
      return { path: `/teams/${team.body.data.id}/invites`, body: { email: `${fresh('teamie')}@example.com` } };
    },
    stored: (items, owner, { path }) => count(items, T(owner.orgId), `TEAMINVITE#${pad(Number(path.split('/')[2]))}#`),
  },
  {
    route: 'POST /credentials',
    variant: 'one key (create or update)',
    expect: 'same',
    prepare: async () => ({ path: '/credentials', body: { key: 'race/deploy-token', value: fresh('race-secret-') } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'CRED#race/deploy-token'),
    idOf: (data) => data.key,
  },
  {
    route: 'POST /integrations/{id}/configure',
    variant: 'its fields (create or update)',
    expect: 'same',
    prepare: async () => ({
      path: '/integrations/git/configure',
      body: { fields: { access_token: fresh('ghp_race_token_'), webhook_secret: fresh('race-webhook-secret-') } },
    }),
    stored: (items, owner) => count(items, T(owner.orgId), 'CRED#webhook.git.secret'),
  },
  {
    route: 'POST /tasks',
    variant: 'one open title',
    expect: 'one',
    prepare: async () => ({ path: '/tasks', body: { title: 'Write the release notes' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'TASK#'),
  },
  {
    route: 'POST /v1/public/tasks',
    variant: 'one open title',
    expect: 'one',
    prepare: async () => ({ path: '/v1/public/tasks', body: { title: 'Publish the changelog' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'TASK#'),
  },
  {
    route: 'POST /products',
    variant: 'an explicit slug',
    expect: 'one',
    prepare: async () => ({ path: '/products', body: { name: 'Rocket', slug: 'rocket' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'PRODUCT#'),
  },
  {
    route: 'POST /products',
    variant: 'a generated slug',
    expect: 'each',
    prepare: async () => ({ path: '/products', body: { name: 'Rocket Fuel' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'PRODUCT#rocket-fuel'),
    idOf: (data) => data.slug,
  },
  {
    route: 'POST /activity-log',
    variant: 'one entry (entries repeat)',
    expect: 'each',
    prepare: async () => ({
      path: '/activity-log',
      body: { actor_type: 'user', actor_id: 'racer', action: 'race.ran' },
    }),
    stored: (items, owner) => count(items, `${T(owner.orgId)}#ACTIVITY#user`, '', (item) => item.action === 'race.ran'),
  },
  {
    route: 'POST /logs',
    variant: 'one line (lines repeat)',
    expect: 'each',
    prepare: async () => ({ path: '/logs', body: { agent: 'racer', message: 'hello' } }),
    stored: (items, owner) => count(items, `${T(owner.orgId)}#LOGS`, 'LOG#'),
  },
  {
    route: 'POST /rules',
    variant: 'one rule (rules repeat)',
    expect: 'each',
    prepare: async () => ({ path: '/rules', body: { rule: 'Test before merging' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'RULE#'),
  },
  {
    route: 'POST /files',
    variant: 'one path',
    expect: 'one',
    prepare: async () => ({ path: '/files', body: { name: 'plan.md', path: 'docs/plan.md', content: '# Plan' } }),
    stored: (items, owner) => count(items, `${T(owner.orgId)}#FILES`, 'FILE#'),
  },
  {
    route: 'POST /agents',
    variant: 'one name',
    expect: 'one',
    prepare: async () => ({ path: '/agents', body: { name: 'racer', display_name: 'Racer' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'AGENT#'),
    idOf: (data) => (data.agent as { id: number } | undefined)?.id ?? data.id,
  },
  {
    route: 'POST /v1/public/agents',
    variant: 'one name',
    expect: 'one',
    prepare: async () => ({ path: '/v1/public/agents', body: { name: 'public-racer', role: 'writer' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'AGENT#'),
  },
  {
    route: 'POST /automations',
    variant: 'one automation (automations repeat)',
    expect: 'each',
    prepare: async (owner) => {
      await post('agents', '/agents', owner.token, { name: 'scripter' });
      return {
        path: '/automations',
        body: { name: 'nightly', agent_name: 'scripter', type: 'Script', path: 'scripts/nightly.sh' },
      };
    },
    stored: (items, owner) =>
      count(items, T(owner.orgId), 'AUTOMATION#scripter#', (item) => !String(item.sk).endsWith('#tick')),
  },
  {
    route: 'POST /v1/public/templates',
    variant: 'one slug',
    expect: 'one',
    prepare: async () => ({ path: '/v1/public/templates', body: { name: 'Race bot', slug: 'race-bot' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'TEMPLATE#'),
  },
  {
    route: 'POST /agent-pipelines',
    variant: 'one name',
    expect: 'one',
    prepare: async () => ({
      path: '/agent-pipelines',
      body: { name: 'Ship it', stages: [{ name: 'build', agent: 'full-stack-dev' }] },
    }),
    stored: (items, owner) => count(items, T(owner.orgId), 'PIPELINE#'),
  },
  {
    route: 'POST /agent-pipelines/templates/{id}/clone',
    variant: 'one name',
    expect: 'one',
    prepare: async () => ({ path: '/agent-pipelines/templates/feature-delivery/clone', body: { name: 'Delivery' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'PIPELINE#'),
  },
  {
    route: 'POST /discovery-engines',
    variant: 'an explicit slug',
    expect: 'one',
    prepare: async () => ({ path: '/discovery-engines', body: { name: 'Market', layer: 'market', slug: 'market' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'DISCOVERY#'),
  },
  {
    route: 'POST /discovery-engines',
    variant: 'a generated slug',
    expect: 'each',
    prepare: async () => ({ path: '/discovery-engines', body: { name: 'Competitor Watch', layer: 'market' } }),
    stored: (items, owner) => count(items, T(owner.orgId), 'DISCOVERY#'),
    idOf: (data) => data.slug,
  },
  {
    route: 'POST /task-queue/submit',
    variant: 'one idempotency key',
    expect: 'same',
    prepare: async () => ({ path: '/task-queue/submit', body: { task_type: 'resize', idempotency_key: 'race-1' } }),
    stored: (items, owner) => count(items, `${T(owner.orgId)}#JOBS`, 'JOB#'),
  },
  {
    route: 'POST /job-queue/submit',
    variant: 'one idempotency key',
    expect: 'same',
    prepare: async () => ({ path: '/job-queue/submit', body: { task_type: 'render', idempotency_key: 'race-2' } }),
    stored: (items, owner) => count(items, `${T(owner.orgId)}#JOBS`, 'JOB#'),
  },
  {
    route: 'POST /job-queue/submit-scheduled',
    variant: 'one idempotency key',
    expect: 'same',
    prepare: async () => ({
      path: '/job-queue/submit-scheduled',
      body: {
        task_type: 'report',
        idempotency_key: 'race-3',
        run_at: new Date(Date.now() + 3_600_000).toISOString(),
      },
    }),
    stored: (items, owner) => count(items, `${T(owner.orgId)}#JOBS`, 'JOB#'),
  },
  {
    route: 'POST /billing/create-payment-intent',
    variant: 'one idempotency key',
    expect: 'same',
    prepare: async () => ({
      path: '/billing/create-payment-intent',
      body: { package_slug: 'starter', idempotency_key: 'race-4' },
    }),
    stored: (items, owner) => count(items, T(owner.orgId), 'PAYMENTINTENT#'),
  },
];

interface Outcome {
  case: string;
  statuses: number[];
  stored: number;
}

const outcomes: Outcome[] = [];
let requests = 0;

beforeAll(async () => {
  // The file's first user is the instance admin; the racers are ordinary users.
  await newUser('raceadmin');
});

afterAll(() => {
  console.info(
    `concurrency: ${outcomes.length} create races over ${new Set(CASES.map((c) => c.route)).size} routes, ` +
      `${requests} concurrent requests (${RACERS} at a time)`,
  );
});

describe('concurrent duplicate creates', () => {
  it('has a race for every create route of the registry', () => {
    const covered = new Set(CASES.map((c) => c.route));
    expect(createRoutes.map(keyOf).filter((key) => !covered.has(key))).toEqual([]);
    expect([...covered].filter((key) => !createRoutes.some((route) => keyOf(route) === key))).toEqual([]);
  });

  it.each(CASES.map((c) => [`${c.route}, ${c.variant}: ${c.expect}`, c] as const))('%s', async (_, race) => {
    // Prepare
    const route = createRoutes.find((candidate) => keyOf(candidate) === race.route) as RouteDef;
    const handler = await handlerOf(route.group);
    const owner = await newUser('racer');
    const prepared = await race.prepare(owner);
    const token = prepared.token ?? (route.auth === 'none' ? undefined : owner.token);

    // Act
    requests += RACERS;
    const answers = await Promise.all(
      Array.from({ length: RACERS }, () => call(handler, 'POST', prepared.path, { token, body: prepared.body })),
    );

    // Assess
    const statuses = answers.map((answer) => answer.status);
    const succeeded = answers.filter((answer) => answer.status >= 200 && answer.status < 300);
    const ids = succeeded.map((answer) => (race.idOf ?? ((data) => data.id))(answer.body.data));
    const stored = race.stored(await scanTable(), owner, prepared);
    outcomes.push({ case: `${race.route} ${race.variant}`, statuses, stored });
    const expected = {
      one: { successes: 1, conflicts: RACERS - 1, distinct: 1, stored: 1 },
      each: { successes: RACERS, conflicts: 0, distinct: RACERS, stored: RACERS },
      same: { successes: RACERS, conflicts: 0, distinct: 1, stored: 1 },
    }[race.expect];
    const summary = {
      successes: succeeded.length,
      conflicts: statuses.filter((status) => status === 409).length,
      distinct: new Set(ids).size,
      stored,
    };
    expect(summary, `statuses ${statuses.join(', ')}`).toEqual(expected);
    expect(ids.every((id) => id !== undefined)).toBe(true);
    // The first create answers the route's status; repeats of an idempotent one may answer 200.
    const allowed = race.expect === 'same' ? [200, route.status ?? 200] : [route.status ?? 200];
    expect(succeeded.filter((answer) => !allowed.includes(answer.status))).toEqual([]);
    for (const refused of answers.filter((answer) => answer.status === 409)) {
      expect(refused.body).toEqual({
        error: { code: 'CONFLICT', message: expect.any(String), details: expect.any(Array) },
      });
      expect(refused.headers['X-Trace-Id']).toBeTruthy();
    }
  });

  it('leaves every guard, pointer and count in agreement with the records', async () => {
    // Assess
    expect(integrityProblems(await scanTable())).toEqual([]);
  });
});
