import { API_KEY_PREFIX } from '#lib/identity/api-key-format';

/**
 * A leak scan over response bodies and log lines: storage attributes, hashes, sealed credential parts,
 * stack traces and the secrets the tests use must never reach a client or a log line. The test helpers
 * that send requests (`call`, `api`) run every response through `assertNoLeaks`, so a route that
 * returns a raw item or an error path that returns a stack fails whatever test happened to hit it.
 */

/** Names of storage attributes and sealed values: table keys, index keys, hashes and envelope parts. */
const STORAGE_KEYS = new Set(['pk', 'sk', 'envelope', 'ciphertext', 'wrapped_key', 'iv', 'auth_tag']);
const isForbiddenKey = (key: string): boolean =>
  STORAGE_KEYS.has(key) || /^gsi\d/i.test(key) || key.endsWith('_hash') || key.startsWith('encrypted_');

/** A V8 stack frame: `at fn (file:line:col)` or `at file:line:col`. */
const STACK_FRAME = /\n\s+at \S.*:\d+:\d+\)?/;
/** An organization API key in full (the masked form, `osk_live_…AbCd`, is fine). */
const RAW_API_KEY = new RegExp(`${API_KEY_PREFIX}[A-Za-z0-9]{20,}`);

export interface Leak {
  /** Where in the body, e.g. `data[3].pk`, or `` for the top level. */
  path: string;
  what: string;
}

export interface LeakAllowance {
  /** The response shows a raw API key on purpose (create, rotate, roll). */
  rawApiKey?: boolean;
  /** The response shows a stored credential's value on purpose (reading one credential). */
  credentialValues?: boolean;
}

type CanaryKind = 'secret' | 'credential';
const canaries = new Map<string, CanaryKind>();

/**
 * Registers a secret value the tests use (a password, a stored credential, a signing secret): the scan
 * fails any response or log line that contains it. Short values (`v`, `value`) would match innocent text.
 */
export function registerCanary(secret: string, kind: CanaryKind = 'secret'): void {
  if (secret.length >= 6 && !canaries.has(secret)) canaries.set(secret, kind);
}

/** The secrets the test configuration itself holds. */
for (const secret of ['correct horse battery', 'a long password', process.env.JWT_SECRET ?? '']) registerCanary(secret);

/** The secret `text` holds (a raw API key or a registered canary), if any; for log lines too. */
export function secretIn(text: string, allow: LeakAllowance = {}): string | undefined {
  if (!allow.rawApiKey && RAW_API_KEY.test(text)) return 'a raw API key';
  for (const [secret, kind] of canaries) {
    if (kind === 'credential' && allow.credentialValues) continue;
    if (text.includes(secret)) return `the test ${kind} ${JSON.stringify(secret)}`;
  }
  return undefined;
}

function stringLeak(value: string, allow: LeakAllowance): string | undefined {
  return STACK_FRAME.test(value) ? 'a stack trace' : secretIn(value, allow);
}

/** Every leak in `body` (a parsed JSON value), with its path. Pure apart from the canary registry. */
export function findLeaks(body: unknown, allow: LeakAllowance = {}, path = ''): Leak[] {
  if (typeof body === 'string') {
    const what = stringLeak(body, allow);
    return what ? [{ path, what }] : [];
  }
  if (Array.isArray(body)) return body.flatMap((value, index) => findLeaks(value, allow, `${path}[${index}]`));
  if (body === null || typeof body !== 'object') return [];
  return Object.entries(body).flatMap(([key, value]) => {
    const at = path ? `${path}.${key}` : key;
    const own = isForbiddenKey(key) ? [{ path: at, what: `the storage attribute "${key}"` }] : [];
    return [...own, ...findLeaks(value, allow, at)];
  });
}

/**
 * Routes that legitimately show something the scan looks for, by method and path (under /api, without
 * the /v1 prefix), with why.
 */
const ALLOWED: Array<{ method: string; path: RegExp; allow: LeakAllowance; why: string }> = [
  {
    method: 'POST',
    path: /^\/organizations\/[^/]+\/api-keys(\/[^/]+\/(rotate|roll))?$/,
    allow: { rawApiKey: true },
    why: 'the raw key is shown once, on create, rotate and roll',
  },
  {
    method: 'GET',
    path: /^\/credentials\/[^/]+$/,
    allow: { credentialValues: true },
    why: 'reading one credential decrypts its value for the caller; the list never shows it',
  },
];

export function allowanceFor(method: string, path: string): LeakAllowance {
  const bare = path
    .replace(/\?.*$/, '')
    .replace(/^\/api/, '')
    .replace(/^\/v1\//, '/');
  return ALLOWED.find((entry) => entry.method === method && entry.path.test(bare))?.allow ?? {};
}

let scanned = 0;

/** How many responses this process scanned. */
export const scannedCount = (): number => scanned;

/** Throws an assertion error naming each leak in the response to `method path` and where it is. */
export function assertNoLeaks(method: string, path: string, status: number, body: unknown): void {
  scanned += 1;
  const leaks = findLeaks(body, allowanceFor(method, path));
  if (leaks.length === 0) return;
  const list = leaks.map((leak) => `${leak.path || '(body)'}: ${leak.what}`).join('; ');
  throw new Error(`${method} ${path} answered ${status} with a leak: ${list}`);
}
