import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '#infra/local/gateway';
import { checkedFetch } from '#tests/support/http-api';

let gateway: Gateway;
const url = (path: string) => `${gateway.url}/api${path}`;
const json = { 'content-type': 'application/json' };
// biome-ignore lint/suspicious/noExplicitAny: response bodies of every shape
const body = async (response: Response): Promise<any> => response.json();

beforeAll(async () => {
  gateway = await startGateway({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await gateway?.close();
});

describe('authentication over HTTP', () => {
  it('registers, logs in, uses the token and the cookie, and logs out', async () => {
    // Register and log in.
    const registered = await checkedFetch(url('/auth/register'), {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        username: 'httpuser',
        email: 'httpuser@example.com',
        password: 'over the wire',
        terms_accepted: true,
        privacy_accepted: true,
      }),
    });
    expect(registered.status).toBe(201);
    const loggedIn = await checkedFetch(url('/auth/login'), {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: 'httpuser@example.com', password: 'over the wire' }),
    });
    expect(loggedIn.status).toBe(200);
    const { token } = (await body(loggedIn)).data;
    const setCookie = loggedIn.headers.getSetCookie();
    expect(setCookie).toHaveLength(1);
    expect(setCookie[0]).toContain('HttpOnly');
    const cookie = (setCookie[0] as string).split(';')[0] as string;

    // The bearer token and the cookie both authenticate, under /api and /api/v1.
    const byToken = await checkedFetch(url('/auth/me'), { headers: { authorization: `Bearer ${token}` } });
    const byCookie = await checkedFetch(`${gateway.url}/api/v1/auth/me`, { headers: { cookie } });
    expect((await body(byToken)).data.username).toBe('httpuser');
    expect((await body(byCookie)).data.auth.method).toBe('cookie');

    // A cookie-only logout from a page on another origin is refused; with X-Requested-With it works.
    const forged = await checkedFetch(url('/auth/logout'), {
      method: 'POST',
      headers: { cookie, origin: 'https://evil.example' },
    });
    expect(forged.status).toBe(403);
    const loggedOut = await checkedFetch(url('/auth/logout'), {
      method: 'POST',
      headers: { cookie, 'x-requested-with': 'fetch' },
    });
    expect(loggedOut.status).toBe(200);
    expect(loggedOut.headers.getSetCookie()[0]).toContain('Max-Age=0');

    // The token is dead from the next request on.
    const after = await checkedFetch(url('/auth/me'), { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
    expect(after.headers.get('x-trace-id')).toBeTruthy();
  });
});
