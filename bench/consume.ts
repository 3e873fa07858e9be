/**
 * Throughput of POST /tokens/consume with concurrent clients, in process on DynamoDB Local: all
 * clients on one organization (they contend for one balance) and the same number spread over
 * separate organizations. Prints the figures; asserts nothing.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-consume');
const { call, newUser } = await import('#tests/support/identity');
const { handler: tokens } = await import('#functions/http/tokens');

const CLIENTS = 8;
const SECONDS = 5;

async function run(label: string, tokensOf: string[]) {
  const deadline = performance.now() + SECONDS * 1000;
  const counts = new Map<number, number>();
  const latencies: number[] = [];
  await Promise.all(
    tokensOf.map(async (token) => {
      while (performance.now() < deadline) {
        const started = performance.now();
        const response = await call(tokens, 'POST', '/tokens/consume', {
          token,
          body: { amount: 1, action: 'bench' },
        });
        latencies.push(performance.now() - started);
        counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const ok = counts.get(200) ?? 0;
  const statuses = [...counts.entries()].map(([status, n]) => `${n}×${status}`).join(', ');
  console.log(
    `${label}: ${(ok / SECONDS).toFixed(0)} consumes/s with ${CLIENTS} clients (${statuses}); ` +
      (`latency p50 ${latencies[Math.floor(latencies.length / 2)]?.toFixed(1)} ms, p99 ` +
        `${latencies[Math.floor(latencies.length * 0.99)]?.toFixed(1)} ms`),
  );
}

const shared = await newUser('shared');
await run(
  'one organization',
  Array.from({ length: CLIENTS }, () => shared.token),
);
const separate = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => newUser(`org${i}`)));
await run(
  'separate organizations',
  separate.map((user) => user.token),
);
await dynamo.stop();
