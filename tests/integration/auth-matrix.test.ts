import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as credentials } from '#functions/http/credentials';
import type { RouteDef } from '#lib/http/route';
import { allRoutes } from '#lib/routes/index';
import { type AuthFixture, authFixture, type Caller } from '#tests/support/auth-fixture';
import { type Credentials, everyRouteCredentials, moreCredentials } from '#tests/support/bad-credentials';
import { forgeToken, nowSeconds } from '#tests/support/credentials';
import { call, login, newUser } from '#tests/support/identity';
import { concretePath, type RawAnswer, sample, sendTo } from '#tests/support/registry';
import { admits, BODIES, idsFor, key, NEEDS, type Request, requestOf } from '#tests/support/route-access';

/**
 * The authentication and authorization matrix, generated from the route registry: every bearer route is
 * sent every kind of bad credential (401) and every valid credential that lacks what the route needs
 * (403), and lets through every credential that has it; public routes answer without a credential;
 * signed routes refuse bearer credentials and bad signatures. Positive controls show each credential
 * accepted as made, so that a refusal can only come from what the case changed.
 */

const bearerRoutes = allRoutes.filter((route) => route.auth === 'bearer');
/** Routes that end the caller's session or account; they get callers of their own. */
const ENDS_CALLER = new Set(['POST /auth/logout', 'DELETE /users/me']);

let fixture: AuthFixture;
const counts = { routes: new Set<string>(), authentication: 0, authorization: 0, admitted: 0, other: 0 };

beforeAll(async () => {
  fixture = await authFixture();
}, 60_000);

afterAll(() => {
  console.info(
    `authentication matrix: ${counts.routes.size} routes; ${counts.authentication} authentication cases (401), ` +
      `${counts.authorization} authorization cases (403), ${counts.admitted} admitted-caller controls, ` +
      `${counts.other} public and signed-route cases`,
  );
});

const requestTo = (route: RouteDef) => requestOf(route, fixture);

async function send(route: RouteDef, headers: Record<string, string>, request: Request = requestTo(route)) {
  counts.routes.add(key(route));
  return sendTo(route, request.path, {
    headers: { 'content-type': 'application/json', ...headers },
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
}

const errorOf = (answer: RawAnswer): { code?: string; message?: string } => {
  try {
    return (JSON.parse(answer.body) as { error?: { code?: string; message?: string } }).error ?? {};
  } catch {
    return {};
  }
};

const describeAnswer = (answer: RawAnswer) => `${answer.status} ${answer.body.slice(0, 160)}`;

/** Runs `work` over `items`, `limit` at a time; the answers come back in the order of the items. */
async function inBatches<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += limit) {
    results.push(...(await Promise.all(items.slice(start, start + limit).map(work))));
  }
  return results;
}

/**
 * A reading and a changing route, for the rest of the bad credentials: they test the verifier's details,
 * the same for every route; on a changing route a bad cookie must be a 401 before the CSRF check's 403.
 */
const sampleRoutes = [
  bearerRoutes.find((route) => route.method === 'GET'),
  bearerRoutes.find((route) => route.method !== 'GET' && !ENDS_CALLER.has(key(route))),
] as RouteDef[];

interface Outcome {
  route: string;
  name: string;
  presented: boolean;
  answer: RawAnswer;
}

async function sendAll(routes: RouteDef[], credentials: Credentials): Promise<Outcome[]> {
  const cases = routes.flatMap((route) => {
    const request = requestTo(route);
    return credentials.map(([name, headers]) => ({ route, request, name, headers }));
  });
  return inBatches(cases, 8, async ({ route, request, name, headers }) => ({
    route: key(route),
    name,
    presented: headers.authorization !== undefined || /service_jwt=./.test(headers.cookie ?? ''),
    answer: await send(route, headers, request),
  }));
}

/** Every outcome that is not a 401 in the error envelope with X-Trace-Id and a Bearer challenge. */
const not401 = (outcomes: Outcome[]) =>
  outcomes
    .filter(
      ({ answer }) =>
        answer.status !== 401 ||
        errorOf(answer).code !== 'UNAUTHORIZED' ||
        !answer.headers['X-Trace-Id'] ||
        !/^Bearer realm="[^"]+"/.test(answer.headers['WWW-Authenticate'] ?? ''),
    )
    .map(({ route, name, answer }) => `${route} with ${name}: ${describeAnswer(answer)}`);

describe('the matrix’s own requests', () => {
  it('name every path parameter in a form its route accepts, and every listed need names a route', () => {
    const refused = bearerRoutes.filter(
      (route) => route.params && !route.params.safeParse(idsFor(route, fixture)).success,
    );
    const known = new Set(bearerRoutes.map(key));

    expect(refused.map(key)).toEqual([]);
    expect(Object.keys({ ...NEEDS, ...BODIES }).filter((name) => !known.has(name))).toEqual([]);
  });
});

describe('authentication (401)', () => {
  it('accepts every credential as made on GET /auth/me (positive controls)', async () => {
    // Prepare
    const me = bearerRoutes.find((route) => key(route) === 'GET /auth/me') as RouteDef;
    const { owner } = fixture;
    const controls: Credentials = [
      ['the token from login', { authorization: `Bearer ${owner.token}` }],
      ['the token re-signed unaltered', { authorization: `Bearer ${await forgeToken(owner.token)}` }],
      ['the token with a lower-case scheme', { authorization: `bearer ${owner.token}` }],
      ['the session cookie', { cookie: `service_jwt=${owner.token}` }],
      ...Object.values(fixture.callers).map((caller): [string, Record<string, string>] => [
        caller.name,
        caller.headers,
      ]),
    ];

    // Act
    const answers = await Promise.all(
      controls.map(async ([name, headers]) => [name, (await send(me, headers)).status]),
    );

    // Assess
    expect(answers).toEqual(controls.map(([name]) => [name, 200]));
  });

  it('answers 401 to every bad credential on every bearer route, with one message for all', async () => {
    // Prepare
    const [everyRoute, more] = await Promise.all([everyRouteCredentials(fixture), moreCredentials(fixture)]);

    // Act
    const outcomes = [...(await sendAll(bearerRoutes, everyRoute)), ...(await sendAll(sampleRoutes, more))];
    counts.authentication += outcomes.length;

    // Assess
    expect(not401(outcomes)).toEqual([]);
    // Whatever was wrong with a presented credential, the answer says the same: it tells nothing.
    const messages = new Set(outcomes.filter((outcome) => outcome.presented).map((o) => errorOf(o.answer).message));
    expect([...messages]).toEqual(['Invalid or expired credential']);
  }, 120_000);

  it('answers 401 without a credential under /api/v1 too, and before it reads the path or the body', async () => {
    // Prepare: the versioned alias; path ids of the wrong form and a body of the wrong shape.
    const cases = bearerRoutes.flatMap((route) => [
      {
        route,
        name: 'under /api/v1',
        request: { ...requestTo(route), path: `/api/v1${requestTo(route).path.slice(4)}` },
      },
      {
        route,
        name: 'with a path and body its schemas refuse',
        request: { path: concretePath(route, 'not a valid id'), body: '[["not", "an", "object"]]' },
      },
    ]);

    // Act
    const outcomes = await inBatches(cases, 8, async ({ route, name, request }) => ({
      route: key(route),
      name,
      presented: false,
      answer: await send(route, {}, request),
    }));
    counts.authentication += outcomes.length;

    // Assess
    expect(not401(outcomes)).toEqual([]);
  }, 60_000);
});

describe('authorization (403)', () => {
  it('answers 403 to every caller without the route’s permission or role, and lets the others through', async () => {
    // Prepare: everyone acts in the owner's organization. Deletions go last, refused callers first, so
    // that an admitted deletion cannot turn a later refusal into a 404.
    const c = fixture.callers;
    const callers = [c.owner, c.orgAdmin, c.member, c.viewer, c.roleViewer, c.readKey, c.writeKey, c.adminKey];
    const routes = bearerRoutes
      .filter((route) => !ENDS_CALLER.has(key(route)))
      .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    const refusals: string[] = [];
    const admittedButRefused: string[] = [];

    // Act
    for (const route of routes) {
      const request = requestTo(route);
      const ordered = [...callers].sort((a, b) => Number(admits(a, route)) - Number(admits(b, route)));
      for (const caller of ordered) {
        const answer = await send(route, caller.headers, request);
        const what = `${key(route)} by ${caller.name}: ${describeAnswer(answer)}`;
        if (admits(caller, route)) {
          counts.admitted += 1;
          if (answer.status === 401 || answer.status === 403 || answer.status >= 500) admittedButRefused.push(what);
        } else {
          counts.authorization += 1;
          const error = errorOf(answer);
          if (answer.status !== 403 || error.code !== 'FORBIDDEN' || !answer.headers['X-Trace-Id']) refusals.push(what);
        }
      }
    }

    // Assess
    expect({ refusals, admittedButRefused }).toEqual({ refusals: [], admittedButRefused: [] });
  }, 120_000);

  it('lets the instance admin use the instance-admin routes (positive control for the refusals above)', async () => {
    const routes = bearerRoutes.filter((route) => NEEDS[key(route)] === 'instance admin');
    const answers = await Promise.all(
      routes.map(async (route) => [key(route), (await send(route, fixture.callers.instanceAdmin.headers)).status]),
    );
    counts.admitted += answers.length;

    expect(routes.length).toBeGreaterThan(0);
    expect(answers).toEqual(routes.map((route) => [key(route), 404]));
  });

  it('answers 403 to a credential that names an organization it does not belong to', async () => {
    // Prepare: X-Organization-Id of the instance admin's organization, which no caller here is in, and of
    // one that does not exist (the same answer, so the header tells nothing about which ids exist).
    const elsewhere = { 'x-organization-id': fixture.instanceAdmin.orgId };
    const credentials: Credentials = [
      ['the owner’s token', { authorization: `Bearer ${fixture.owner.token}`, ...elsewhere }],
      ['an admin key', { ...fixture.callers.adminKey.headers, ...elsewhere }],
      [
        'the owner’s token, for an organization that does not exist',
        { authorization: `Bearer ${fixture.owner.token}`, 'x-organization-id': 'org_doesnotexist' },
      ],
    ];

    // Act
    const outcomes = await sendAll(bearerRoutes, credentials);
    counts.authorization += outcomes.length;

    // Assess
    const wrong = outcomes.filter(({ answer }) => answer.status !== 403 || errorOf(answer).code !== 'FORBIDDEN');
    expect(wrong.map(({ route, name, answer }) => `${route} with ${name}: ${describeAnswer(answer)}`)).toEqual([]);
  }, 60_000);
});

describe('routes that end their caller', () => {
  it('refuse API keys and the instance admin’s self-erasure with 403, and serve a user', async () => {
    // Prepare: users of their own, since an admitted request ends them.
    const [logout, eraseSelf] = ['POST /auth/logout', 'DELETE /users/me'].map(
      (name) => bearerRoutes.find((route) => key(route) === name) as RouteDef,
    ) as [RouteDef, RouteDef];
    const { readKey, writeKey, adminKey, instanceAdmin } = fixture.callers;
    const refused: Array<[RouteDef, Caller]> = [
      ...[readKey, writeKey, adminKey].flatMap(
        (caller): Array<[RouteDef, Caller]> => [
          [logout, caller],
          [eraseSelf, caller],
        ],
      ),
      // The specification: admin accounts cannot delete themselves.
      [eraseSelf, instanceAdmin],
    ];
    const [leaving, erasing] = await Promise.all([newUser('leaving'), newUser('erasing')]);

    // Act
    const refusals = await Promise.all(
      refused.map(async ([route, caller]) => [key(route), caller.name, (await send(route, caller.headers)).status]),
    );
    const served = [
      (await send(logout, { authorization: `Bearer ${leaving.token}` })).status,
      (await send(eraseSelf, { authorization: `Bearer ${erasing.token}` })).status,
    ];
    counts.authorization += refusals.length;
    counts.admitted += served.length;

    // Assess
    expect(refusals).toEqual(refused.map(([route, caller]) => [key(route), caller.name, 403]));
    expect(served).toEqual([200, 200]);
  });
});

describe('public routes (auth none)', () => {
  it('answer the same without a credential as with a bad one, never 401 or 403', async () => {
    // Prepare: login and refresh get working credentials in their bodies, refresh one per request.
    const { owner } = fixture;
    const routes = allRoutes.filter((route) => route.auth === 'none');
    const credentials: Credentials = [
      ['no credential', {}],
      ['a garbage bearer token', { authorization: 'Bearer garbage' }],
      ['an expired token', { authorization: `Bearer ${await forgeToken(owner.token, { exp: nowSeconds() - 60 })}` }],
    ];
    let registered = 0;
    const bodyOf = async (route: RouteDef): Promise<unknown> => {
      switch (key(route)) {
        case 'POST /auth/login':
          return { email: owner.email, password: owner.password };
        case 'POST /auth/refresh':
          return { refresh_token: (await login(owner.email, owner.password)).refreshToken };
        case 'POST /auth/forgot-password':
          return { email: owner.email };
        case 'POST /auth/register':
          registered += 1;
          return {
            username: `public${registered}`,
            email: `public${registered}@example.com`,
            password: 'long enough password',
            terms_accepted: true,
            privacy_accepted: true,
          };
        default:
          return route.body ? sample(route.body) : undefined;
      }
    };

    // Act
    const outcomes: Array<{ route: string; statuses: number[]; unenveloped: boolean }> = [];
    for (const route of routes) {
      const answers: RawAnswer[] = [];
      for (const [, headers] of credentials) {
        const body = await bodyOf(route);
        const request = {
          path: concretePath(route, idsFor(route, fixture)),
          ...(body ? { body: JSON.stringify(body) } : {}),
        };
        answers.push(await send(route, headers, request));
      }
      const unenveloped = answers.some((a) => !a.headers['X-Trace-Id'] || (a.status >= 400 && !errorOf(a).code));
      outcomes.push({ route: key(route), statuses: answers.map((answer) => answer.status), unenveloped });
    }
    counts.other += outcomes.length * credentials.length;

    // Assess
    const wrong = outcomes.filter(
      ({ statuses, unenveloped }) =>
        unenveloped || new Set(statuses).size > 1 || statuses.some((status) => status === 401 || status === 403),
    );
    expect(routes.length).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });
});

describe('signed routes (auth signature)', () => {
  const hmacHex = (secret: string, message: string) => createHmac('sha256', secret).update(message).digest('hex');
  const secretOf = (source: string) => `matrix-${source}-secret-0123456789`;

  beforeAll(async () => {
    // The organization holds its webhook secrets, so a wrong signature is wrong against a real one.
    for (const source of ['git', 'deploy', 'chat']) {
      const stored = await call(credentials, 'POST', '/credentials', {
        token: fixture.owner.token,
        body: { key: `webhook.${source}.secret`, value: secretOf(source) },
      });
      if (stored.status !== 201) throw new Error(`storing the ${source} secret answered ${stored.status}`);
    }
  });

  it('answer 401 to no signature, a wrong one, and a bearer credential instead of one', async () => {
    // Prepare
    const { owner, orgId } = fixture;
    const routes = allRoutes.filter((route) => route.auth === 'signature');
    const timestamp = String(nowSeconds());
    const wrongSignatures = {
      'x-github-event': 'push',
      'x-github-delivery': 'matrix-delivery',
      'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      'x-webhook-timestamp': timestamp,
      'x-webhook-signature': `v1=${'0'.repeat(64)}`,
      'stripe-signature': `t=${timestamp},v1=${'0'.repeat(64)}`,
    };
    const cases: Credentials = [
      ['no signature', {}],
      ['wrong signatures', wrongSignatures],
      ['the owner’s token', { authorization: `Bearer ${owner.token}` }],
      ['an admin API key', fixture.callers.adminKey.headers],
      ['the owner’s session cookie', { cookie: `service_jwt=${owner.token}` }],
    ];
    const body = JSON.stringify({ id: 'evt_matrix', type: 'deployment.completed' });

    // Act
    const outcomes: Array<[string, string, number, string | undefined]> = [];
    for (const route of routes) {
      for (const [name, headers] of cases) {
        const answer = await sendTo(route, concretePath(route, {}), {
          headers: { 'content-type': 'application/json', ...headers },
          query: { org: orgId },
          body,
        });
        counts.routes.add(key(route));
        outcomes.push([key(route), name, answer.status, answer.headers['X-Trace-Id'] && errorOf(answer).code]);
      }
    }
    counts.other += outcomes.length;

    // Assess
    expect(routes.length).toBeGreaterThan(0);
    expect(outcomes).toEqual(outcomes.map(([route, name]) => [route, name, 401, 'UNAUTHORIZED']));
  });

  it('let a correct signature through (positive control)', async () => {
    // Prepare: signed with the organization's secrets.
    const byPath = (path: string) => allRoutes.find((route) => route.auth === 'signature' && route.path === path);
    const git = byPath('/webhooks/git') as RouteDef;
    const deploy = byPath('/webhooks/deploy') as RouteDef;
    const ping = JSON.stringify({ zen: 'matrix' });
    const event = JSON.stringify({ id: 'evt_matrix_ok', type: 'deployment.completed', deployment_id: 'matrix' });
    const timestamp = String(nowSeconds());

    // Act
    const answers = [
      await sendTo(git, '/api/webhooks/git', {
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'ping',
          'x-github-delivery': 'matrix-ping',
          'x-hub-signature-256': `sha256=${hmacHex(secretOf('git'), ping)}`,
        },
        query: { org: fixture.orgId },
        body: ping,
      }),
      await sendTo(deploy, '/api/webhooks/deploy', {
        headers: {
          'content-type': 'application/json',
          'x-webhook-timestamp': timestamp,
          'x-webhook-signature': `v1=${hmacHex(secretOf('deploy'), `${timestamp}.${event}`)}`,
        },
        query: { org: fixture.orgId },
        body: event,
      }),
    ];
    counts.other += answers.length;

    // Assess: verified and processed (a ping is acknowledged; the deployment is recorded).
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
  });
});
