/**
 * DynamoDB calls made by one authenticated GET /auth/me, with a JWT and with an API key, counted by a
 * middleware on the real client (DynamoDB Local), and the time per request over 200 requests.
 * Prints the figures; asserts nothing.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-auth');

const { dynamo: client } = await import('#lib/db/client');
const counts = new Map<string, number>();
client.middlewareStack.add(
  (next, context) => async (args) => {
    counts.set(context.commandName as string, (counts.get(context.commandName as string) ?? 0) + 1);
    return next(args);
  },
  { step: 'initialize', name: 'countCalls' },
);
const { call, newUser } = await import('#tests/support/identity');
const { handler: auth } = await import('#functions/http/auth');
const { handler: apiKeys } = await import('#functions/http/api-keys');

const user = await newUser('bench');
const created = await call(apiKeys, 'POST', `/organizations/${user.orgId}/api-keys`, {
  token: user.token,
  body: { name: 'bench', scopes: ['read'] },
});
const apiKey = created.body.data.key as string;

for (const [label, token] of [
  ['JWT', user.token],
  ['API key', apiKey],
] as const) {
  counts.clear();
  const response = await call(auth, 'GET', '/auth/me', { token });
  const calls = [...counts.entries()].map(([name, n]) => `${n} ${name.replace('Command', '')}`).join(', ');
  const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const started = performance.now();
  for (let i = 0; i < 200; i++) await call(auth, 'GET', '/auth/me', { token });
  const perRequest = (performance.now() - started) / 200;
  console.log(
    `GET /auth/me with ${label}: status ${response.status}, ${total} DynamoDB call(s): ${calls}; ` +
      `${perRequest.toFixed(2)} ms per request in process (DynamoDB Local)`,
  );
}
await dynamo.stop();
