import * as fc from 'fast-check';
import {
  bearer,
  type Change,
  type Draft,
  extra,
  type Fault,
  type FuzzTarget,
  fault,
  isObject,
  jsonObject,
  pick,
  weighted,
} from '#tests/support/fuzz-draft';
import { KB100, preview } from '#tests/support/fuzz-values';
import { bodySchemaOf, parametersOf } from '#tests/support/openapi-schema';

/**
 * How the fuzzing suite's callers present themselves (no credential, a forged one, a signature that does
 * not hold, another organization), and the extras put on any request: other content types, unknown
 * fields and query parameters, odd headers, NUL, lone surrogates and 100 KB in strings.
 */

/** A bearer route called without a credential that holds: nothing, junk, a forged or unknown one. */
export function anonymousCredentials(): fc.Arbitrary<Change> {
  const variants: Array<[string, Record<string, string>]> = [
    ['no credential', {}],
    ['a junk bearer token', { authorization: 'Bearer junk' }],
    ['an unknown API key', { authorization: `Bearer osk_live_${'A'.repeat(32)}` }],
    ['a junk session cookie', { cookie: 'service_jwt=junk' }],
    ['Basic credentials', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a bearer token of 5,000 characters', { authorization: `Bearer ${'x'.repeat(5_000)}` }],
  ];
  return pick(variants).map(([label, headers]) => fault(label, (draft) => Object.assign(draft.headers, headers)));
}

/** A signed route called without a signature that holds. */
export function unsignedCredentials(target: FuzzTarget): fc.Arbitrary<Change> {
  const variants: Array<[string, Record<string, string>]> = [
    ['no signature', {}],
    ['a wrong git signature', { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }],
    ['a wrong timestamped signature', { 'x-webhook-timestamp': '1', 'x-webhook-signature': 'v1=00' }],
    ['a wrong payment signature', { 'stripe-signature': 't=1,v1=00' }],
  ];
  return fc.tuple(pick(variants), fc.boolean()).map(([[label, headers], withOrg]) =>
    fault(label, (draft) => {
      Object.assign(draft.headers, headers);
      if (withOrg) draft.query.org = target.caller.user.orgId;
      if (target.kind === 'authenticated') bearer(target.caller.user.token)(draft);
    }),
  );
}

/** A caller with a valid token who presents it wrongly or asks for an organization not theirs. */
export function credentialFaults(target: FuzzTarget): Fault[] {
  const refused = (label: string, change: Change) =>
    fault(label, (draft) => {
      change(draft);
      draft.credentialHolds = false;
    });
  const token = target.caller.user.token;
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const forged = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
  const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
  const changes: Fault[] = [
    weighted(
      2,
      pick([target.foreignOrgId, '__proto__', 'x'.repeat(300), '../org', 'org_missing']).map((org) =>
        refused(`X-Organization-Id ${preview(org)} (not the caller’s)`, (draft) => {
          draft.headers['x-organization-id'] = org;
        }),
      ),
    ),
    weighted(
      1,
      pick<[string, string]>([
        ['a token with a forged signature', `Bearer ${forged}`],
        ['an unsigned token (alg none)', `Bearer ${unsigned}`],
        ['a token with trailing words', `Bearer ${token} extra`],
        ['Basic credentials', `Basic ${Buffer.from('user:pass').toString('base64')}`],
      ]).map(([label, value]) =>
        refused(label, (draft) => {
          draft.headers.authorization = value;
        }),
      ),
    ),
  ];
  if (target.def.method !== 'GET') {
    changes.push(
      weighted(
        1,
        pick(['no Origin', 'https://evil.example']).map((origin) =>
          refused(`session cookie without an allowed Origin (${origin})`, (draft) => {
            delete draft.headers.authorization;
            draft.headers.cookie = `service_jwt=${token}`;
            delete draft.headers['x-requested-with'];
            if (origin === 'no Origin') delete draft.headers.origin;
            else draft.headers.origin = origin;
          }),
        ),
      ),
    );
  }
  return changes;
}

const ODD_HEADERS = ['__proto__', 'constructor', 'x-forwarded-for', 'x-forwarded-proto', 'host', 'cookie', 'origin'];
const HOSTILE_TEXTS = [
  '__proto__',
  'constructor',
  '../../etc/passwd',
  'a\u0000b',
  '\ud800',
  'x'.repeat(200),
  'x'.repeat(5_000),
  '%',
  '*',
  "' OR '1'='1",
  '0',
  '1',
  'me',
  ' ',
];

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/xml',
  '',
  'application/json, text/html',
  'x'.repeat(1_000),
];

/** Things done to a request that may or may not be faults in themselves. */
export function extras(target: FuzzTarget): Array<fc.Arbitrary<Change>> {
  const changes: Array<fc.Arbitrary<Change>> = [
    pick(CONTENT_TYPES).map((type) =>
      extra(`Content-Type ${preview(type)}`, (draft) => {
        draft.headers['content-type'] = type;
      }),
    ),
    fc.constant(extra('no Content-Type', (draft) => delete draft.headers['content-type'])),
    pick(['unknown', '__proto__', 'constructor']).map((name) =>
      extra(`unknown query parameter ${name}`, (draft) => {
        Object.defineProperty(draft.query, name, { value: 'x', enumerable: true, configurable: true, writable: true });
      }),
    ),
    pick(['x'.repeat(500), '../../etc', 'a b', '']).map((value) =>
      extra(`X-Trace-Id ${preview(value)}`, (draft) => {
        draft.headers['x-trace-id'] = value;
      }),
    ),
    fc.tuple(pick(ODD_HEADERS), pick(['x', '', '../..', 'x'.repeat(4_000)])).map(([name, value]) =>
      extra(`header ${name}: ${preview(value)}`, (draft) => {
        Object.defineProperty(draft.headers, name, { value, enumerable: true, configurable: true, writable: true });
      }),
    ),
  ];
  // Declared query parameters given hostile values their schema allows: with a path id that names nothing,
  // such a request reaches the route's own code.
  for (const parameter of parametersOf(target.operation, 'query')) {
    const allowed = HOSTILE_TEXTS.filter((text) => !target.judge.forbidsText(parameter.schema, text));
    if (allowed.length === 0) continue;
    changes.push(
      pick(allowed).map((text) =>
        extra(`query ${parameter.name} = ${preview(text)} (allowed)`, (draft) => {
          draft.query[parameter.name] = text;
        }),
      ),
    );
  }
  if (target.def.method !== 'GET') {
    const fieldsOf = target.judge.resolve(bodySchemaOf(target.operation))?.properties ?? {};
    const properties = Object.keys(fieldsOf);
    const unknown = ['unexpected', '__proto__', 'constructor', 'org_id', 'id', 'role', 'pk'].filter(
      (name) => !properties.includes(name),
    );
    changes.push(
      fc.tuple(pick(unknown), fc.jsonValue({ maxDepth: 2 })).map(([name, value]) =>
        extra(`unknown field ${name} = ${preview(value)}`, (draft) => {
          Object.defineProperty(jsonObject(draft), name, {
            value,
            enumerable: true,
            configurable: true,
            writable: true,
          });
        }),
      ),
    );
    // Fields the document gives an example of are left alone: the example is the value that has the payload
    // read at all (a webhook's event type), and another one may rightly be acknowledged unread.
    const exampled = new Set(
      Object.entries(fieldsOf)
        .filter(([, field]) => target.judge.resolve(field)?.example !== undefined)
        .map(([name]) => name),
    );
    for (const [label, change] of [
      ['NUL and lone surrogates added to', (text: string) => `${text}\u0000\ud800\udfff`],
      ['100 KB in', () => KB100],
    ] as const) {
      changes.push(
        fc.nat().map((index) => (draft: Draft) => {
          if (draft.body.kind !== 'json' || !isObject(draft.body.value)) return;
          const fields = Object.entries(draft.body.value).filter(
            ([name, value]) => typeof value === 'string' && !exampled.has(name),
          );
          const field = fields[index % Math.max(fields.length, 1)];
          if (!field) return;
          draft.body.value[field[0]] = change(field[1] as string);
          draft.extras.push(`${label} body.${field[0]}`);
        }),
      );
    }
  }
  return changes;
}
