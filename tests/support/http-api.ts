import { assertContract } from '#tests/support/contract';
import { assertNoLeaks } from '#tests/support/leak-scan';

/**
 * Test helpers for end-to-end tests that speak to a running service over real HTTP, as a client would:
 * one request, a new user's sign-up, and a wait for what the service does in its own time.
 */

/**
 * Sends a request to `base` (the service's `/api` URL) with JSON `body`, as the holder of `token`; the
 * status and the parsed JSON body, which went through the leak scan (tests/support/leak-scan.ts) and kept
 * the OpenAPI document's promise for its route and status (tests/support/contract.ts).
 *
 * @example
 * const created = await api(base, 'POST', '/tasks', token, { title: 'Check the login page' });
 */
export async function api(base: string, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies of every shape
  const json: any = await response.json();
  assertNoLeaks(method, path, response.status, json);
  assertContract(method, path, response.status, json, response.headers.get('content-type') ?? undefined);
  return { status: response.status, body: json };
}

/**
 * `fetch` for tests that need the raw response (headers, cookies, non-JSON bodies): the answer goes
 * through the leak scan and the response contract as `api()`'s do.
 */
export async function checkedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, init);
  const method = init.method ?? 'GET';
  if (method === 'HEAD' || method === 'OPTIONS') return response;
  const path = new URL(url).pathname;
  const type = response.headers.get('content-type') ?? undefined;
  const body: unknown = type?.includes('json') ? await response.clone().json() : undefined;
  if (body !== undefined) assertNoLeaks(method, path, response.status, body);
  assertContract(method, path, response.status, body, type);
  return response;
}

/** Registers `username` (`<username>@example.com`, who accepts the terms) and logs them in; their token. */
export async function signUp(base: string, username: string): Promise<string> {
  const credentials = { email: `${username}@example.com`, password: 'a long password' };
  await api(base, 'POST', '/auth/register', undefined, {
    username,
    ...credentials,
    terms_accepted: true,
    privacy_accepted: true,
  });
  const login = await api(base, 'POST', '/auth/login', undefined, credentials);
  if (login.status !== 200) throw new Error(`login failed: ${JSON.stringify(login.body)}`);
  return login.body.data.token;
}

/**
 * Reads with `read` every 200 ms until `done` holds for what it read, and answers that; fails after
 * `timeoutMs` with the last value read.
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not reached; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
