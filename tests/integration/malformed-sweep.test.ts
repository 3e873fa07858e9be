import { beforeAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '#lib/http/route';
import { allRoutes } from '#lib/routes/index';
import { newUser, type TestUser } from '#tests/support/identity';
import { concretePath, deep, sample, sendTo } from '#tests/support/registry';

/**
 * Every route of the registry, sent malformed requests as a careless client or an attacker would:
 * wrong types, missing and extra fields, huge and deep values, odd path ids, bad query values, wrong
 * content types and empty bodies, anonymous and authenticated. Every answer is a 4xx (or a success
 * for what happens to be valid) in the error envelope with X-Trace-Id: never a 5xx.
 */
const ODD_IDS = ['__proto__', 'constructor', '..%2F..%2Fetc%2Fpasswd', '0', '-1', '1.5', '99999999999999999999', '%00'];
const BODIES: Array<{ name: string; body: string | undefined; contentType?: string }> = [
  { name: 'no body', body: undefined },
  { name: 'empty body', body: '' },
  { name: 'not JSON', body: '{"unterminated' },
  { name: 'a JSON array', body: '[1,2,3]' },
  { name: 'a JSON string', body: '"text"' },
  { name: 'null', body: 'null' },
  { name: 'wrong types', body: JSON.stringify({ name: 42, title: [], amount: 'x', email: {}, key: null }) },
  { name: 'huge strings', body: JSON.stringify({ name: 'x'.repeat(100_000), title: 'y'.repeat(100_000) }) },
  { name: 'nested 40 deep', body: JSON.stringify({ metadata: deep(40), config: deep(40) }) },
  { name: 'nested 3,000 deep', body: JSON.stringify(deep(3_000)) },
  { name: 'NUL and unpaired surrogates', body: '{"name":"a\\u0000b\\ud800","title":"\\udfff"}' },
  { name: 'numbers out of range', body: JSON.stringify({ amount: -1e308, limit: 1e21, id: 0.5, priority: -7 }) },
  { name: 'form content type', body: 'name=x&title=y', contentType: 'application/x-www-form-urlencoded' },
];
const QUERIES: Array<Record<string, string>> = [
  { limit: '-1', offset: 'abc' },
  { limit: '1e9', offset: '99999999999999999999' },
  { q: 'x'.repeat(5_000), status: 'nonsense,,', next: 'maybe' },
];

/** One field at a time turned wrong, deep, huge or hostile, the rest valid. */
function fieldMutations(route: RouteDef): Array<{ name: string; body: string }> {
  const base = sample(route.body);
  if (!base || typeof base !== 'object' || Array.isArray(base)) return [];
  const mutations: Array<{ name: string; body: string }> = [
    { name: 'a valid body', body: JSON.stringify(base) },
    { name: 'a __proto__ field', body: JSON.stringify(base).replace(/^\{/, '{"__proto__":{"admin":true},') },
  ];
  for (const field of Object.keys(base).slice(0, 8)) {
    for (const [name, value] of [
      ['nested 40 deep', deep(40)],
      ['100 KB', 'x'.repeat(100_000)],
      ['an object', { unexpected: true }],
      ['negative', -1],
    ] as const) {
      const fresh = sample(route.body) as Record<string, unknown>;
      mutations.push({ name: `${field} ${name}`, body: JSON.stringify({ ...fresh, [field]: value }) });
    }
  }
  return mutations;
}

interface Outcome {
  route: string;
  variant: string;
  status: number;
  envelope: boolean;
  traceId: boolean;
}

async function send(
  route: RouteDef,
  variant: string,
  options: { path: string; body?: string; contentType?: string; query?: Record<string, string>; token?: string },
): Promise<Outcome> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const { body, ...rest } = options;
  const response = await sendTo(route, options.path, { headers, ...(rest.query ? { query: rest.query } : {}), body });
  const status = response.status;
  let envelope = status < 400;
  if (status >= 400) {
    try {
      const parsed = JSON.parse(response.body) as { error?: { code?: unknown; message?: unknown } };
      envelope = typeof parsed.error?.code === 'string' && typeof parsed.error?.message === 'string';
    } catch {
      envelope = false;
    }
  }
  const traceId = Boolean(response.headers['X-Trace-Id']);
  return { route: `${route.method} ${route.path}`, variant, status, envelope, traceId };
}

let user: TestUser;

beforeAll(async () => {
  // An ordinary user (the file's first user is the instance admin), acting in their own organization.
  await newUser('sweepadmin');
  user = await newUser('sweeper');
});

describe('malformed requests over every route', () => {
  it('answers every one without a 5xx, in the error envelope, with X-Trace-Id', async () => {
    const outcomes: Outcome[] = [];
    for (const route of allRoutes) {
      // Ending the sweeper's own session or account would turn the rest of the sweep into 401s.
      const endsCaller = ['POST /auth/logout', 'DELETE /users/me'].includes(`${route.method} ${route.path}`);
      for (const token of endsCaller ? [undefined] : [undefined, user.token]) {
        const who = token ? 'authenticated' : 'anonymous';
        const ids = route.path.includes('{') ? ODD_IDS : ['-'];
        for (const id of ids) {
          outcomes.push(await send(route, `${who}, path id ${id}`, { path: concretePath(route, id), token }));
        }
        const path = concretePath(route, '1');
        if (route.method !== 'GET') {
          for (const body of [...BODIES, ...fieldMutations(route)]) {
            outcomes.push(await send(route, `${who}, ${body.name}`, { path, token, ...body }));
          }
        }
        for (const [index, query] of QUERIES.entries()) {
          outcomes.push(await send(route, `${who}, bad query ${index}`, { path, token, query }));
        }
      }
    }
    const serverErrors = outcomes.filter((outcome) => outcome.status >= 500);
    const unenveloped = outcomes.filter((outcome) => !outcome.envelope || !outcome.traceId);
    console.info(`malformed-request sweep: ${outcomes.length} requests, ${serverErrors.length} answered 5xx`);
    expect(serverErrors).toEqual([]);
    expect(unenveloped.filter((outcome) => outcome.status >= 400)).toEqual([]);
  }, 600_000);
});
