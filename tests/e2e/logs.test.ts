import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/ports';
import { checkedFetch } from '#tests/support/http-api';
import { launch, newDataDir, stopInstances, waitForOutput } from '#tests/support/instances';

/** `npm start` keeps the service's log lines in DATA_DIR/logs, and GET /logs reads them back per organization. */
afterAll(stopInstances);

// biome-ignore lint/suspicious/noExplicitAny: response bodies of every shape
const body = async (response: Response): Promise<any> => response.json();

async function register(base: string, username: string): Promise<string> {
  const headers = { 'content-type': 'application/json' };
  const password = 'over the wire';
  const email = `${username}@example.com`;
  const registered = await checkedFetch(`${base}/auth/register`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ username, email, password, terms_accepted: true, privacy_accepted: true }),
  });
  expect(registered.status).toBe(201);
  const loggedIn = await checkedFetch(`${base}/auth/login`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ email, password }),
  });
  return (await body(loggedIn)).data.token as string;
}

describe('the service log under npm start', () => {
  it('writes JSON lines to DATA_DIR/logs/service.log and shows each organization its own', async () => {
    // Prepare
    const instance = launch(await freePort(), newDataDir());
    await waitForOutput(instance, 'is running');
    expect(instance.output()).toContain(join(instance.dataDir, 'logs', 'service.log'));
    const base = `http://127.0.0.1:${instance.port}/api`;
    const owner = await register(base, 'logowner');
    const other = await register(base, 'logother');
    const asOwner = { authorization: `Bearer ${owner}`, 'content-type': 'application/json' };

    // Act: a request of the owner's that is refused is logged with its organization.
    const refused = await checkedFetch(`${base}/logs`, { method: 'POST', headers: asOwner, body: '{}' });
    const mine = await checkedFetch(`${base}/logs?source=file&q=rejected`, { headers: asOwner });
    const theirs = await checkedFetch(`${base}/logs?source=file`, { headers: { authorization: `Bearer ${other}` } });
    const files = await checkedFetch(`${base}/logs/files`, { headers: asOwner });

    // Assess
    expect(refused.status).toBe(400);
    const file = join(instance.dataDir, 'logs', 'service.log');
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('"message":"request rejected"');
    expect((await body(mine)).data).toEqual([
      expect.objectContaining({
        source: 'file',
        message: 'request rejected',
        origin: 'service.log',
        meta: expect.objectContaining({ status: 400, code: 'VALIDATION_ERROR' }),
      }),
    ]);
    expect((await body(theirs)).data).toEqual([]);
    expect((await body(files)).data).toEqual([
      { name: 'service.log', kind: 'file', size_bytes: expect.any(Number), last_modified: expect.any(String) },
    ]);
  });
});
