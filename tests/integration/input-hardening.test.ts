import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { backupsHandler } from '#functions/http/backups';
import { discoveryEnginesHandler } from '#functions/http/discovery-engines';
import { integrationsHandler } from '#functions/http/integrations';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { discoveryRunConsumer } from '#functions/queue/discovery-run';
import { webhookDeliveryHandler } from '#functions/queue/webhook-delivery';
import { type Gateway, startGateway } from '#infra/local/gateway';
import { cloudFormationTags } from '#infra/local/yaml-tags';
import { config, loadConfig } from '#lib/config';
import type { GroupHandler } from '#lib/http/group-handler';
import { SESSION_COOKIE } from '#lib/http/middleware/authenticate';
import { MAX_BODY_BYTES } from '#lib/http/middleware/json-body';
import type { RouteDef } from '#lib/http/route';
import type { AgentRunner, AgentRunRequest, HostResolver, MessageQueue, QueueName } from '#lib/kernel/ports';
import { allRoutes } from '#lib/routes/index';
import { WEBHOOK_EVENTS } from '#lib/webhooks/outbound/event-types';
import { TargetRefusedError, vetTarget } from '#lib/webhooks/outbound/targets';
import { dataTree, type RecordingBlobs, recordingBlobs } from '#tests/support/backups';
import { loadEvent } from '#tests/support/events';
import { type CallOptions, type CallResult, call, newUser, type TestUser } from '#tests/support/identity';
import { concretePath, handlerOf, type RawAnswer, type SendOptions, sendTo } from '#tests/support/registry';
import { recordingScheduler } from '#tests/support/scheduler';
import { startConnectionCounter } from '#tests/support/webhook-receiver';

// This file runs with the setting a deployment has: no private webhook targets (local mode allows them).
vi.hoisted(() => {
  process.env.ALLOW_PRIVATE_WEBHOOK_TARGETS = 'false';
});

/**
 * Hostile input at every door the API has, the routes taken from the registry so that a new route is
 * covered without anyone listing it: bodies over the 1 MiB limit (through the handlers and through the local
 * gateway), caller-controlled values on their way into response headers, SSRF through every URL the API
 * takes (refused when given, and when called, by what the name resolves to then), path traversal through
 * every name that could reach a file, and the CSRF rule of cookie-authenticated writes.
 */

const counts = { bodyLimit: 0, headers: 0, ssrf: 0, ssrfSpellings: 0, ssrfFields: 0, traversal: 0, csrf: 0 };

const isWrite = (route: RouteDef) => !['GET', 'HEAD', 'OPTIONS'].includes(route.method);
const label = (route: RouteDef) => `${route.method} ${route.path}`;
const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

/** Every header value of every answer in this file: visible ASCII, spaces and tabs, nothing else. */
const headerProblems: string[] = [];
function scanHeaders(where: string, answer: RawAnswer): void {
  const values = [
    ...Object.entries(answer.headers).map(([name, value]) => [name, String(value)] as const),
    ...answer.cookies.map((cookie) => ['Set-Cookie', cookie] as const),
  ];
  for (const [name, value] of values) {
    if (!/^[\t\x20-\x7e]*$/.test(value) || !/^[A-Za-z0-9-]+$/.test(name)) {
      headerProblems.push(`${where}: ${name}: ${JSON.stringify(value)}`);
    }
  }
}

// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies of every shape
type Raw = RawAnswer & { json: any };

/** Handlers used instead of serverless.yml's where a test needs to see what they touch. */
const overrides = new Map<string, GroupHandler>();

/**
 * One request to a route's function (tests/support/registry `sendTo`: the raw path as a client sends it,
 * the answer through the leak scan) as `token`'s holder if given; its headers are scanned, its JSON read.
 */
async function send(
  route: Pick<RouteDef, 'group' | 'method'>,
  path: string,
  options: SendOptions & { token?: string } = {},
): Promise<Raw> {
  const { token, ...rest } = options;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  const override = overrides.get(route.group);
  const answer = await sendTo(route, path, { ...rest, headers, ...(override ? { handler: override } : {}) });
  scanHeaders(`${route.method} ${path}`, answer);
  let json: unknown;
  try {
    json = JSON.parse(answer.body);
  } catch {
    json = undefined;
  }
  return { ...answer, json };
}

const isEnvelope = (answer: Raw, code: string) =>
  answer.json?.error?.code === code &&
  typeof answer.json.error.message === 'string' &&
  Array.isArray(answer.json.error.details);

let owner: TestUser;

beforeAll(async () => {
  // The first user of this file's table is the instance admin; the owner below is an ordinary user.
  await newUser('instanceadmin');
  owner = await newUser('owner');
});

afterAll(() => {
  expect(headerProblems).toEqual([]);
  console.info(
    `input hardening: ${counts.bodyLimit} body-limit cases, ${counts.headers} header cases, ` +
      `${counts.ssrf} SSRF cases (${counts.ssrfSpellings} spellings × ${counts.ssrfFields} URL fields, and ` +
      `names resolving to private addresses at call time), ${counts.traversal} traversal cases, ` +
      `${counts.csrf} CSRF cases; ${allRoutes.length} routes in the registry`,
  );
});

// ---------------------------------------------------------------------------------------------------------

/** A JSON body of exactly `bytes` bytes. */
const jsonOfSize = (bytes: number) => {
  const shell = '{"pad":""}';
  return `{"pad":"${'x'.repeat(bytes - shell.length)}"}`;
};

describe('bodies over 1 MiB', () => {
  const writes = allRoutes.filter(isWrite);
  const over = jsonOfSize(MAX_BODY_BYTES + 1);
  const overBase64 = Buffer.from(over).toString('base64');
  const atLimit = jsonOfSize(MAX_BODY_BYTES);
  /** One write route of each function: what the functions share (the body middleware) is seen once each. */
  const onePerGroup = writes.filter(
    (route, index) => writes.findIndex((other) => other.group === route.group) === index,
  );

  it('answer 413 in the error envelope on every route that takes a body, JSON or base64, any caller', async () => {
    // Act
    const wrong: string[] = [];
    for (const route of writes) {
      const path = concretePath(route, '1');
      for (const variant of [
        { name: 'anonymous, JSON', options: { body: over } },
        {
          name: 'authenticated, base64',
          options: {
            body: overBase64,
            token: owner.token,
            base64: true,
            headers: { 'content-type': 'application/octet-stream' },
          },
        },
      ]) {
        const answer = await send(route, path, variant.options);
        if (answer.status !== 413 || !isEnvelope(answer, 'PAYLOAD_TOO_LARGE') || !answer.headers['X-Trace-Id']) {
          wrong.push(`${label(route)} (${variant.name}): ${answer.status} ${answer.body.slice(0, 120)}`);
        }
        counts.bodyLimit += 1;
      }
    }
    // Exactly the limit is read (and then judged by the route, as an anonymous caller: 401 or 400).
    for (const route of onePerGroup) {
      const limit = await send(route, concretePath(route, '1'), { body: atLimit });
      if (limit.status === 413) wrong.push(`${label(route)}: 413 for a body of exactly ${MAX_BODY_BYTES} bytes`);
      counts.bodyLimit += 1;
    }

    // Assess
    expect(writes.length).toBeGreaterThan(90);
    expect(onePerGroup.length).toBeGreaterThan(25);
    expect(wrong).toEqual([]);
  }, 60_000);

  describe('through the local gateway', () => {
    let gateway: Gateway;
    beforeAll(async () => {
      gateway = await startGateway({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await gateway?.close();
    });

    it('answer 413 in the error envelope on every route, JSON or binary (API Gateway takes up to 10 MB)', async () => {
      // Act
      const wrong: string[] = [];
      const cases = [
        ...writes.map((route) => ({ route, contentType: 'application/json' })),
        // Binary bodies reach the handler base64-encoded; the gateway's part is the same for every route.
        ...onePerGroup.map((route) => ({ route, contentType: 'application/octet-stream' })),
      ];
      for (const { route, contentType } of cases) {
        const response = await fetch(`${gateway.url}${concretePath(route, '1')}`, {
          method: route.method,
          headers: { 'content-type': contentType, authorization: `Bearer ${owner.token}` },
          body: over,
        });
        const text = await response.text();
        const code = (() => {
          try {
            return JSON.parse(text).error?.code;
          } catch {
            return undefined;
          }
        })();
        if (response.status !== 413 || code !== 'PAYLOAD_TOO_LARGE' || !response.headers.get('x-trace-id')) {
          wrong.push(`${label(route)} (${contentType}): ${response.status} ${text.slice(0, 120)}`);
        }
        counts.bodyLimit += 1;
      }

      // Assess
      expect(wrong).toEqual([]);
    }, 60_000);
  });
});

// ---------------------------------------------------------------------------------------------------------

const HOSTILE_HEADER_VALUES = [
  'abc\r\nSet-Cookie: injected=1',
  'abc\nX-Injected: 1',
  'trace-\u00fcnicode-\u2603',
  'nul\u0000byte',
  `${'a'.repeat(200)}`,
];

describe('caller-controlled values on their way into response headers', () => {
  it('keeps a sane X-Trace-Id and replaces any other on every route', async () => {
    // Act
    const wrong: string[] = [];
    for (const route of allRoutes) {
      const path = concretePath(route, '1');
      for (const value of HOSTILE_HEADER_VALUES) {
        const answer = await send(route, path, { headers: { 'x-trace-id': value } });
        const echoed = answer.headers['X-Trace-Id'];
        if (!echoed || echoed === value || !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(echoed)) {
          wrong.push(`${label(route)} ${JSON.stringify(value)} → ${JSON.stringify(echoed)}`);
        }
        counts.headers += 1;
      }
      const sane = await send(route, path, { headers: { 'x-trace-id': 'edge-trace-1' } });
      if (sane.headers['X-Trace-Id'] !== 'edge-trace-1') wrong.push(`${label(route)} did not keep a sane trace id`);
      counts.headers += 1;
    }

    // Assess
    expect(wrong).toEqual([]);
  }, 60_000);

  it('gives no CORS answer to an Origin with CR/LF or non-ASCII, or one only starting like one allowed', async () => {
    // Prepare
    const [allowed] = config.allowedOrigins as [string];
    const route = allRoutes.find((candidate) => candidate.path === '/health') as RouteDef;
    const origins = [
      `${allowed}\r\nX-Injected: 1`,
      `${allowed}\u00e9`,
      `${allowed}.evil.example`,
      `${allowed} `,
      'null',
    ];

    // Act
    const answers = await Promise.all(origins.map((origin) => send(route, '/api/health', { headers: { origin } })));
    const good = await send(route, '/api/health', { headers: { origin: allowed } });

    // Assess
    expect(answers.map((answer) => answer.headers['Access-Control-Allow-Origin'])).toEqual(
      origins.map(() => undefined),
    );
    expect(good.headers['Access-Control-Allow-Origin']).toBe(allowed);
    counts.headers += origins.length + 1;
  });

  it('refuses X-Organization-Id with CR/LF or non-ASCII without echoing it', async () => {
    // Prepare
    const route = allRoutes.find((candidate) => candidate.path === '/tasks' && candidate.method === 'GET') as RouteDef;

    // Act
    const answers = await Promise.all(
      HOSTILE_HEADER_VALUES.map((value) =>
        send(route, '/api/tasks', { token: owner.token, headers: { 'x-organization-id': value } }),
      ),
    );

    // Assess
    for (const [index, answer] of answers.entries()) {
      expect(answer.status, HOSTILE_HEADER_VALUES[index]).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(Object.values(answer.headers).join('\n')).not.toContain(HOSTILE_HEADER_VALUES[index]);
    }
    counts.headers += answers.length;
  });

  it('names a backup download with a safe file name, and refuses names with CR/LF or non-ASCII', async () => {
    // Prepare
    const backups = backupsHandler({ ports: { blobs: recordingBlobs() } });
    const triggered = await call(backups, 'POST', '/backups/trigger', as(owner));
    const filename = triggered.body.data.filename as string;
    const route = allRoutes.find((candidate) => candidate.path === '/backups/{filename}/download') as RouteDef;
    overrides.set('backups', backups);
    const hostile = ['%0d%0aSet-Cookie:%20x=1', `${filename}%0d%0aX-Injected:%201`, `${filename}%C3%A9`, '%E2%98%83'];

    // Act
    const download = await send(route, `/api/backups/${filename}/download`, { token: owner.token });
    const refused = await Promise.all(
      hostile.map((name) => send(route, `/api/backups/${name}/download`, { token: owner.token })),
    );
    overrides.delete('backups');

    // Assess
    expect(download.status).toBe(200);
    expect(download.headers['Content-Disposition']).toBe(`attachment; filename="${filename}"`);
    expect(filename).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(refused.map((answer) => answer.status)).toEqual(hostile.map(() => 400));
    counts.headers += hostile.length + 1;
  });
});

// ---------------------------------------------------------------------------------------------------------

/** Every spelling of a non-public target that a URL field must refuse when it is given. */
const SSRF_URLS = [
  'https://localhost/hook',
  'https://127.0.0.1/hook',
  'https://127.1/hook',
  'https://0/hook',
  'https://0.0.0.0/hook',
  'https://2130706433/hook',
  'https://0x7f000001/hook',
  'https://017700000001/hook',
  'https://0177.0.0.1/hook',
  'https://[::1]/hook',
  'https://[::]/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://[::ffff:7f00:1]/hook',
  'https://[0:0:0:0:0:ffff:127.0.0.1]/hook',
  'https://[64:ff9b::a9fe:a9fe]/hook',
  'https://169.254.169.254/latest/meta-data/',
  'https://[::ffff:169.254.169.254]/hook',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://metadata.google.internal./computeMetadata/v1/',
  'https://metadata/hook',
  'https://instance-data/latest/',
  'https://kubernetes.default.svc.cluster.local/api',
  'https://printer.local/hook',
  'https://router.home.arpa/hook',
  'https://10.0.0.1/hook',
  'https://10.255.255.255/hook',
  'https://172.16.0.1/hook',
  'https://172.31.255.254/hook',
  'https://192.168.0.1/hook',
  'https://100.64.0.1/hook',
  'https://100.127.255.254/hook',
  'https://[fc00::1]/hook',
  'https://[fd12:3456:789a::1]/hook',
  'https://[fe80::1]/hook',
  'https://example.com@127.0.0.1/hook',
  'https://user:secret@example.com/hook',
  'https://localhost./hook',
  'https://127.0.0.1./hook',
  'https://LOCALHOST/hook',
  'https://LocalHost./hook',
  'https://api.localhost/hook',
  'https://%31%32%37.0.0.1/hook',
  'https://127\u30020\u30020\u30021/hook',
  'file:///etc/passwd',
  'gopher://127.0.0.1:70/_x',
  'ftp://example.com/hook',
  'http://example.com/hook',
  'javascript:alert(1)',
  'dict://127.0.0.1:11211/',
  'not a url',
];

const PUBLIC_URL = 'https://hooks.example.com/agent-ops';

interface UrlField {
  name: string;
  /** Sets the field to `url`; the answer. */
  set: (
    user: TestUser,
    url: string,
  ) => Promise<{ status: number; body: { error?: { details?: Array<{ path: string }> } } }>;
  /** The path the 400 names. */
  path: string;
  /** What is stored, read back: must not change on a refusal. */
  stored: (user: TestUser) => Promise<unknown>;
}

const tenantConfig = tenantConfigHandler();
const integrations = integrationsHandler();

const URL_FIELDS: UrlField[] = [
  ...WEBHOOK_EVENTS.map(
    (event): UrlField => ({
      name: `tenant-config webhooks.${event}`,
      set: (user, url) =>
        call(tenantConfig, 'PATCH', '/tenant-config', as(user, { body: { webhooks: { [event]: url } } })),
      path: `body.webhooks.${event}`,
      stored: async (user) => (await call(tenantConfig, 'GET', '/tenant-config', as(user))).body.data.webhooks,
    }),
  ),
  {
    name: 'llm integration base_url',
    set: (user, url) =>
      call(
        integrations,
        'POST',
        '/integrations/llm/configure',
        as(user, { body: { fields: { base_url: url, api_key: 'sk-test-1' } } }),
      ),
    path: 'body.fields.base_url',
    stored: async (user) => (await call(integrations, 'GET', '/integrations/llm/status', as(user))).body.data,
  },
];

/** An SQS event of one message. */
function sqsEvent(body: unknown): SQSEvent {
  const template = (loadEvent<SQSEvent>('sqs/discovery-run').Records as [SQSRecord])[0];
  return {
    Records: [{ ...structuredClone(template), messageId: randomBytes(8).toString('hex'), body: JSON.stringify(body) }],
  };
}

/** A resolver that answers from `table` (each name's addresses) and records every name asked. */
function tableResolver(table: Record<string, string[]>): HostResolver & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async lookup(host) {
      asked.push(host);
      const addresses = table[host.replace(/\.$/, '')];
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
  };
}

/** Addresses outside the public Internet that a name may resolve to at call time. */
const PRIVATE_ANSWERS = [
  '127.0.0.1',
  '127.45.6.7',
  '0.0.0.0',
  '10.1.2.3',
  '172.20.0.5',
  '192.168.10.20',
  '100.100.100.200',
  '169.254.169.254',
  '::1',
  '::ffff:10.0.0.8',
  '::ffff:169.254.169.254',
  'fd00:ec2::254',
  'fe80::a9fe:a9fe',
];

describe('SSRF through every URL the API takes', () => {
  it('runs with private targets off, as every deployment does unless it opts in', () => {
    // Prepare
    const serverless = parse(readFileSync('serverless.yml', 'utf8'), { customTags: cloudFormationTags }) as {
      provider: { environment?: Record<string, unknown> };
      functions: Record<string, { environment?: Record<string, unknown> }>;
    };
    const environments = [
      serverless.provider.environment ?? {},
      ...Object.values(serverless.functions).map((fn) => fn.environment ?? {}),
    ];

    // Assess
    expect(config.allowPrivateWebhookTargets).toBe(false);
    expect(loadConfig({ APP_MODE: 'aws', JWT_SECRET: 'x'.repeat(32) }).allowPrivateWebhookTargets).toBe(false);
    expect(environments.filter((environment) => 'ALLOW_PRIVATE_WEBHOOK_TARGETS' in environment)).toEqual([]);
  });

  it('refuses each spelling of a non-public target in each URL field with 400 naming it; nothing changes', async () => {
    // Prepare
    const user = await newUser('ssrf');
    const before = await Promise.all(URL_FIELDS.map((field) => field.stored(user)));

    // Act
    const wrong: string[] = [];
    for (const field of URL_FIELDS) {
      for (const url of SSRF_URLS) {
        const answer = await field.set(user, url);
        const paths = answer.body.error?.details?.map((detail) => detail.path) ?? [];
        if (answer.status !== 400 || !paths.includes(field.path)) wrong.push(`${field.name} ${url}: ${answer.status}`);
        counts.ssrf += 1;
      }
    }
    const after = await Promise.all(URL_FIELDS.map((field) => field.stored(user)));
    const accepted = await Promise.all(URL_FIELDS.map((field) => field.set(user, PUBLIC_URL)));
    counts.ssrfSpellings = SSRF_URLS.length;
    counts.ssrfFields = URL_FIELDS.length;

    // Assess
    expect(wrong).toEqual([]);
    expect(after).toEqual(before);
    expect(accepted.map((answer) => answer.status)).toEqual(URL_FIELDS.map(() => 200));
  }, 30_000);

  it('refuses an organization avatar that is not http(s) (the service never fetches it; browsers do)', async () => {
    // Prepare
    const organizations = await handlerOf('organizations');

    // Act
    const statuses = [];
    for (const url of [
      'file:///etc/passwd',
      'gopher://127.0.0.1:70/_x',
      'ftp://example.com/a.png',
      'javascript:alert(1)',
    ]) {
      const answer = await call(
        organizations,
        'PATCH',
        `/organizations/${owner.orgId}`,
        as(owner, { body: { avatar_url: url } }),
      );
      statuses.push(answer.status);
      counts.ssrf += 1;
    }

    // Assess
    expect(statuses).toEqual([400, 400, 400, 400]);
  });

  it('refuses a webhook whose name resolves to a loopback address at delivery time, connecting nowhere', async () => {
    // Prepare: names that pass validation, resolving (only through the test's resolver) to this machine.
    const user = await newUser('rebind');
    const counter = await startConnectionCounter();
    const kept: Array<{ queue: QueueName; body: unknown }> = [];
    const queue: MessageQueue = { send: async (name, body) => void kept.push({ queue: name, body }) };
    const configHandler = tenantConfigHandler({ ports: { queue } });
    const names = ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '0.0.0.0'].map(
      (address, index) => [`hook-${index}.example.com`, address] as const,
    );
    const resolver = tableResolver(Object.fromEntries(names.map(([name, address]) => [name, [address]])));
    const deliver = webhookDeliveryHandler({ ports: { queue }, retryDelaysSeconds: [], lookup: resolver.lookup });

    // Act
    const outcomes = [];
    for (const [name] of names) {
      const url = `https://${name}:${counter.port}/hook`;
      const set = await call(
        configHandler,
        'PATCH',
        '/tenant-config',
        as(user, { body: { webhooks: { task_completed: url } } }),
      );
      expect(set.status).toBe(200);
      const queued = await call(configHandler, 'POST', '/tenant-config/webhooks/test', as(user));
      await deliver(sqsEvent(kept.at(-1)?.body));
      const delivery = await call(
        configHandler,
        'GET',
        `/tenant-config/webhook-deliveries/${queued.body.data.id}`,
        as(user),
      );
      outcomes.push({ status: delivery.body.data.status, error: delivery.body.data.attempts[0]?.error });
      counts.ssrf += 1;
    }
    await counter.close();

    // Assess
    expect(counter.connections).toBe(0);
    expect(resolver.asked).toEqual(names.map(([name]) => name));
    for (const outcome of outcomes) {
      expect(outcome).toEqual({
        status: 'failed',
        error: expect.stringMatching(/resolves to a (loopback|unspecified) address/),
      });
    }
  });

  it('refuses, before any connection, a delivery target whose name resolves to any private address', async () => {
    // The same check the delivery function makes before it connects (which the test above saw refuse
    // loopback end to end); called on its own here so that no other private address is ever dialled.
    const outcomes = await Promise.all(
      PRIVATE_ANSWERS.map(async (address) => {
        const resolver = tableResolver({ 'hooks.example.com': ['93.184.216.34', address] });
        const url = new URL('https://hooks.example.com/agent-ops');
        return vetTarget(url, { allowPrivateTargets: false, lookup: resolver.lookup }).then(
          () => `${address}: allowed`,
          (error: Error) => (error instanceof TargetRefusedError ? 'refused' : `${address}: ${error.message}`),
        );
      }),
    );
    expect(outcomes).toEqual(PRIVATE_ANSWERS.map(() => 'refused'));
    counts.ssrf += outcomes.length;
  });

  describe('the model provider’s base URL, judged when it is called', () => {
    /** A provider runner that never reaches a network: it records the connection it was handed. */
    function providerRunner(): AgentRunner & { requests: AgentRunRequest[] } {
      const requests: AgentRunRequest[] = [];
      return {
        kind: 'provider',
        requests,
        async run(request) {
          requests.push(request);
          return {
            output: { summary: 'done', findings: [] },
            usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 },
            model: 'test-model',
          };
        },
      };
    }

    /** An organization whose llm base URL is stored as given (through the credentials API, which takes any value). */
    async function organizationWithLlm(baseUrl: string) {
      const user = await newUser('llm');
      const credentials = await handlerOf('credentials');
      for (const [key, value] of [
        ['integration.llm.base_url', baseUrl],
        ['integration.llm.api_key', `sk-${randomBytes(8).toString('hex')}`],
      ]) {
        const stored = await call(credentials, 'POST', '/credentials', as(user, { body: { key, value } }));
        expect(stored.status).toBe(201);
      }
      return user;
    }

    /** Runs one discovery run of `user` through the real queue consumer; the run as the API reads it. */
    async function runDiscovery(user: TestUser, runner: AgentRunner, resolver: HostResolver) {
      const kept: unknown[] = [];
      const queue: MessageQueue = { send: async (_name, body) => void kept.push(body) };
      const api = discoveryEnginesHandler({ ports: { scheduler: recordingScheduler(), queue } });
      await call(api, 'POST', '/discovery-engines', as(user, { body: { name: 'Radar', layer: 'market' } }));
      await call(api, 'POST', '/discovery-engines/radar/run', as(user));
      const result = await discoveryRunConsumer({ runner, resolver })(sqsEvent(kept[0]));
      expect(result).toEqual({ batchItemFailures: [] });
      return (await call(api, 'GET', '/discovery-engines/radar', as(user))).body.data.recent_runs[0];
    }

    it('refuses a name that resolves to any private address, without calling the provider', async () => {
      // Act
      const outcomes = [];
      for (const [index, address] of PRIVATE_ANSWERS.entries()) {
        const name = `llm-${index}.example.com`;
        const user = await organizationWithLlm(`https://${name}/v1`);
        const runner = providerRunner();
        // The private address comes second: one bad answer among good ones is enough to refuse.
        const resolver = tableResolver({ [name]: ['93.184.216.34', address] });
        const run = await runDiscovery(user, runner, resolver);
        outcomes.push({ address, status: run.status, error: run.error, calls: runner.requests.length });
        counts.ssrf += 1;
      }

      // Assess
      for (const outcome of outcomes) {
        expect(outcome).toEqual({
          address: outcome.address,
          status: 'failed',
          error: expect.stringContaining('base_url is refused'),
          calls: 0,
        });
      }
    }, 30_000);

    it('refuses a stored literal or private name without resolving it, and calls a public one', async () => {
      // Prepare
      const refused = [
        'https://127.1/v1',
        'https://[::ffff:a9fe:a9fe]/v1',
        'https://metadata.google.internal/v1',
        'http://llm.example.com/v1',
      ];

      // Act
      const outcomes = [];
      for (const url of refused) {
        const resolver = tableResolver({});
        const runner = providerRunner();
        const run = await runDiscovery(await organizationWithLlm(url), runner, resolver);
        outcomes.push({ status: run.status, calls: runner.requests.length, asked: resolver.asked.length });
        counts.ssrf += 1;
      }
      const runner = providerRunner();
      const resolver = tableResolver({ 'llm.example.com': ['93.184.216.34'] });
      const allowed = await runDiscovery(await organizationWithLlm('https://llm.example.com/v1'), runner, resolver);

      // Assess
      expect(outcomes).toEqual(refused.map(() => ({ status: 'failed', calls: 0, asked: 0 })));
      expect(allowed.status).toBe('succeeded');
      // The call is pinned to the address that was judged: a second answer of the resolver cannot move it.
      expect(runner.requests.map((request) => request.connection)).toEqual([
        {
          baseUrl: 'https://llm.example.com/v1',
          apiKey: expect.any(String),
          address: { address: '93.184.216.34', family: 4 },
        },
      ]);
      expect(resolver.asked).toEqual(['llm.example.com']);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------

/** Path traversal in every spelling a client, a proxy or a second decoding could produce. */
const TRAVERSALS = [
  '..',
  '.',
  '..%2F..%2F..%2Fetc%2Fpasswd',
  '%2e%2e%2f%2e%2e%2fmaster.key',
  '%2E%2E%2F',
  '%252e%252e%252fmaster.key',
  '..%5C..%5Cmaster.key',
  '%2Fetc%2Fpasswd',
  'C:%5Cwindows%5Cwin.ini',
  '%00',
  'x%00.json.gz',
  '....%2F%2F',
  '..%c0%afmaster.key',
];

/** The same in bodies and query strings, where nothing decodes them: the values as they arrive. */
const TRAVERSAL_VALUES = [
  '../../../etc/passwd',
  '..\\..\\master.key',
  '/etc/passwd',
  'C:\\windows\\win.ini',
  '~/.ssh/id_rsa',
  'docs/../../master.key',
  'docs/./notes.md',
  'docs//notes.md',
  'notes\u0000.md',
  '%2e%2e/%2e%2e/master.key',
  '..',
];

describe('path traversal', () => {
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const dataDir = process.env.DATA_DIR as string;
  const outside = `${dataDir}-outside`;
  let blobs: RecordingBlobs;

  beforeAll(async () => {
    writeFileSync(join(dataDir, 'canary.txt'), canary);
    mkdirSync(join(dataDir, 'backups'), { recursive: true });
    writeFileSync(join(dataDir, 'backups', 'canary.txt'), canary);
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'canary.txt'), canary);
    blobs = recordingBlobs();
    overrides.set('backups', backupsHandler({ ports: { blobs } }));
    // A backup of the owner's, so that the organization's folder exists to climb out of.
    await call(overrides.get('backups') as GroupHandler, 'POST', '/backups/trigger', as(owner));
  });

  afterAll(() => {
    overrides.delete('backups');
    rmSync(outside, { recursive: true, force: true });
    expect(dirname(outside)).toBe(dirname(dataDir));
  });

  it('refuses every spelling in every path parameter of every route, touching nothing outside', async () => {
    // Prepare
    const routes = allRoutes.filter((route) => route.path.includes('{'));
    const treeBefore = dataTree();
    const callsBefore = blobs.calls.length;

    // Act
    const wrong: string[] = [];
    const confined: string[] = [];
    for (const route of routes) {
      for (const spelling of TRAVERSALS) {
        const answer = await send(route, concretePath(route, spelling), {
          token: owner.token,
          ...(isWrite(route) ? { body: '{}' } : {}),
        });
        if (answer.body.includes(canary)) wrong.push(`${label(route)} ${spelling}: answered the canary`);
        if (answer.status >= 500) wrong.push(`${label(route)} ${spelling}: ${answer.status}`);
        if (answer.status < 400) confined.push(`${label(route)} ${spelling}: ${answer.status}`);
        counts.traversal += 1;
      }
    }

    // Assess: refused (4xx) everywhere, no file of the data folder changed, no store key outside the organization.
    expect(routes.length).toBeGreaterThan(80);
    expect(wrong).toEqual([]);
    expect(confined).toEqual([]);
    expect(dataTree()).toEqual(treeBefore);
    expect(readFileSync(join(outside, 'canary.txt'), 'utf8')).toBe(canary);
    expect(
      blobs.calls.slice(callsBefore).filter((entry) => !entry.split(' ')[1]?.startsWith(`${owner.orgId}/`)),
    ).toEqual([]);
  }, 60_000);

  it('refuses every spelling in the path and key fields of bodies and queries, or keeps it as a literal', async () => {
    // Prepare
    const treeBefore = dataTree();
    const files = await handlerOf('files');
    const automations = await handlerOf('automations');
    const credentials = await handlerOf('credentials');
    const automation = { name: 'nightly', agent_name: 'builder', type: 'script' };
    const storedPaths = async () =>
      (await call(files, 'GET', '/files', as(owner, { query: { limit: '200' } }))).body.data.map(
        (file: { path: string }) => file.path,
      );
    const storedKeys = async () =>
      (await call(credentials, 'GET', '/credentials', as(owner, { query: { limit: '200' } }))).body.data.map(
        (credential: { key: string }) => credential.key,
      );
    /**
     * `literal`: values no decoding or normalizing reaches, which a field may keep as the name they are (a
     * `%2e%2e` folder of the workspace; a credential name, which is a key of the table and never a file).
     * `stored`: where an accepted value must then be found exactly as sent.
     */
    const fields: Array<{
      name: string;
      path: string;
      literal: string[];
      send: (value: string) => Promise<CallResult>;
      stored?: () => Promise<string[]>;
    }> = [
      {
        name: 'POST /files path',
        path: 'body.path',
        literal: ['%2e%2e/%2e%2e/master.key'],
        send: (value) => call(files, 'POST', '/files', as(owner, { body: { name: 'x', path: value, content: 'x' } })),
        stored: storedPaths,
      },
      {
        name: 'GET /files/search workspace',
        path: 'query.workspace',
        literal: ['%2e%2e/%2e%2e/master.key'],
        send: (value) => call(files, 'GET', '/files/search', as(owner, { query: { workspace: value } })),
      },
      {
        name: 'POST /automations path',
        path: 'body.path',
        literal: ['%2e%2e/%2e%2e/master.key'],
        send: (value) => call(automations, 'POST', '/automations', as(owner, { body: { ...automation, path: value } })),
      },
      {
        name: 'POST /credentials key',
        path: 'body.key',
        literal: ['docs/../../master.key', 'docs/./notes.md', 'docs//notes.md'],
        send: (value) => call(credentials, 'POST', '/credentials', as(owner, { body: { key: value, value: 'v' } })),
        stored: storedKeys,
      },
    ];

    // Act
    const wrong: string[] = [];
    const literals: string[] = [];
    for (const field of fields) {
      for (const value of TRAVERSAL_VALUES) {
        const answer = await field.send(value);
        const paths = (answer.body?.error?.details ?? []).map((detail: { path: string }) => detail.path);
        const refused = answer.status === 400 && paths.includes(field.path);
        if (!refused && !(field.literal.includes(value) && answer.status < 500)) {
          wrong.push(`${field.name} ${JSON.stringify(value)}: ${answer.status} ${JSON.stringify(paths)}`);
        }
        if (!refused && answer.status < 300 && field.stored && !(await field.stored()).includes(value)) {
          wrong.push(`${field.name} ${JSON.stringify(value)}: not stored as the name it is`);
        }
        if (!refused) literals.push(`${field.name} ${value}`);
        if (JSON.stringify(answer.body).includes(canary)) wrong.push(`${field.name}: answered the canary`);
        counts.traversal += 1;
      }
    }

    // Assess
    expect(wrong).toEqual([]);
    expect(literals.length).toBeLessThanOrEqual(fields.flatMap((field) => field.literal).length);
    expect(dataTree()).toEqual(treeBefore);
  });
});

// ---------------------------------------------------------------------------------------------------------

const CSRF_MESSAGE = 'Cookie-authenticated changes need an allowed Origin or an X-Requested-With header';

describe('the CSRF rule of cookie-authenticated writes', () => {
  const bearerRoutes = allRoutes.filter((route) => route.auth === 'bearer');
  const writes = bearerRoutes.filter(isWrite);
  const cookie = () => [`${SESSION_COOKIE}=${owner.token}`];
  const isCsrfRefusal = (answer: Raw) => answer.status === 403 && answer.json?.error?.message === CSRF_MESSAGE;

  it('refuses every write with the session cookie and no allowed Origin or X-Requested-With', async () => {
    // Act
    const wrong: string[] = [];
    for (const route of writes) {
      for (const headers of [
        {} as Record<string, string>,
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { origin: `${config.allowedOrigins[0]}.evil.example` },
      ]) {
        const answer = await send(route, concretePath(route, '999999'), { cookies: cookie(), headers, body: '{}' });
        if (!isCsrfRefusal(answer)) wrong.push(`${label(route)} ${JSON.stringify(headers)}: ${answer.status}`);
        counts.csrf += 1;
      }
    }

    // Assess
    expect(writes.length).toBeGreaterThan(80);
    expect(wrong).toEqual([]);
  }, 60_000);

  it('lets a cookie write through with an allowed Origin or X-Requested-With, to its own validation', async () => {
    // Prepare: routes with a body, sent one that fails validation, so that nothing is changed.
    const validated = writes.filter((route) => route.body);

    // Act
    const wrong: string[] = [];
    for (const route of validated) {
      for (const headers of [
        { origin: config.allowedOrigins[0] as string } as Record<string, string>,
        { 'x-requested-with': 'XMLHttpRequest' },
      ]) {
        const answer = await send(route, concretePath(route, '999999'), { cookies: cookie(), headers, body: '[]' });
        if (isCsrfRefusal(answer) || answer.status === 401)
          wrong.push(`${label(route)} ${JSON.stringify(headers)}: ${answer.status}`);
        counts.csrf += 1;
      }
    }

    // Assess
    expect(validated.length).toBeGreaterThan(50);
    expect(wrong).toEqual([]);
  }, 60_000);

  it('starts a browser session only from an allowed Origin: a cross-site form logs no one in', async () => {
    // Prepare: a cross-site form can post text/plain, which the body parser reads as JSON all the same.
    const starts = allRoutes.filter((route) => route.startsSession);
    const login = JSON.stringify({ email: owner.email, password: owner.password });

    // Act
    const answers: Record<string, number> = {};
    for (const [name, origin] of [
      ['foreign', 'https://evil.example'],
      ['opaque', 'null'],
      ['allowed', config.allowedOrigins[0] as string],
      ['none', undefined],
    ] as const) {
      const headers: Record<string, string> = { 'content-type': 'text/plain', ...(origin ? { origin } : {}) };
      const answer = await send({ group: 'auth', method: 'POST' }, '/api/auth/login', { headers, body: login });
      answers[name] = answer.status;
      counts.csrf += 1;
    }

    // Assess
    expect(starts.map(label)).toEqual(expect.arrayContaining(['POST /auth/login', 'POST /auth/refresh']));
    expect(answers).toEqual({ foreign: 403, opaque: 403, allowed: 200, none: 200 });
  });

  it('answers every read with the cookie alone, and every bearer write without Origin or the header', async () => {
    // Act
    const wrong: string[] = [];
    for (const route of bearerRoutes.filter((candidate) => !isWrite(candidate))) {
      const answer = await send(route, concretePath(route, '999999'), { cookies: cookie() });
      if (isCsrfRefusal(answer) || answer.status === 401) wrong.push(`${label(route)} (cookie read): ${answer.status}`);
      counts.csrf += 1;
    }
    for (const route of writes.filter((candidate) => candidate.body)) {
      const answer = await send(route, concretePath(route, '999999'), { token: owner.token, body: '[]' });
      if (isCsrfRefusal(answer) || answer.status === 401)
        wrong.push(`${label(route)} (bearer write): ${answer.status}`);
      counts.csrf += 1;
    }
    const me = await send({ group: 'auth', method: 'GET' }, '/api/auth/me', { cookies: cookie() });

    // Assess
    expect(wrong).toEqual([]);
    expect(me.status).toBe(200);
  }, 60_000);
});
