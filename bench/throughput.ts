/**
 * Throughput and latency through the local gateway, beside two bare Node servers on the same DynamoDB
 * Local and table (bench/support/serve-bare.ts): `single`, the route's one DynamoDB call and nothing else,
 * and `floor`, the least that keeps the guarantees (the credential's one read, then the rate-limit write
 * and the route's own call side by side; no middleware). Each server runs in a process of its own, the
 * load generator (autocannon, 10 connections) in this one, DynamoDB Local in a third: they share this
 * machine's cores, as `npm start` would.
 *
 * Routes: GET /tasks/{id} with a JWT and with an API key, GET /tasks?limit=50, POST /tasks (unique titles).
 * Every server and route runs in turn, round after round (the order rotated each round), so that the
 * machine's load falls on all of them alike. Per figure: min / median / max over the rounds of requests
 * per second, p50 and p99 (ms), Node CPU per request of the serving process (process.cpuUsage) and
 * DynamoDB calls per request (counted in the serving process, including work done after the answer);
 * then the ratios gateway ÷ floor and gateway ÷ single, taken within each round.
 *
 * Then usage growth: API-key GETs in an organization after 100 prior API-key requests (a fresh one each
 * round) and in one after 10,000 (BENCH_PRIOR), alternating, side by side.
 *
 * BENCH_SECONDS (5) per run and BENCH_ROUNDS (5) set the length. Rate-limit thresholds are lifted in the
 * servers (the counting write stays; see serve-gateway.ts), so that answers are 2xx. Asserts nothing.
 */
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { benchTable } from '#bench/support/local-table';
import { callsBetween, type Served, startServed } from '#bench/support/served';
import { type Spread, showSpread, spread } from '#bench/support/spread';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PRIOR = Number(process.env.BENCH_PRIOR ?? 10_000);
const CONNECTIONS = 10;

const dynamo = await benchTable('bench-throughput');
const { benchOwner } = await import('#bench/support/seeding');
const { call, newUser } = await import('#tests/support/identity');
const { handler: apiKeys } = await import('#functions/http/api-keys');
const { createTask } = await import('#lib/tasks/task-create');

// The first user of a table is the instance admin; the measured callers are ordinary owners.
await newUser('admin');

interface Caller {
  orgId: string;
  token: string;
  key: string;
  taskId: number;
}

/** A new organization's owner, `tasks` tasks in it and a read API key. */
async function newCaller(tasks = 1): Promise<Caller> {
  const { owner, ctx } = await benchOwner();
  let taskId = 0;
  for (let index = 0; index < tasks; index += 1) {
    const task = await createTask(ctx, {
      title: `Benchmark task ${index}`,
      description: 'A task of ordinary size: a title, a sentence of description, an assignee and a priority.',
      assignee: 'agent-1',
      priority: 'P1',
    });
    taskId ||= task.id;
  }
  const created = await call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
    token: owner.token,
    body: { name: 'bench', scopes: ['read'] },
  });
  if (created.status !== 201) throw new Error(`API key failed: ${JSON.stringify(created.body)}`);
  return { orgId: owner.orgId, token: owner.token, key: created.body.data.key, taskId };
}

const [jwtCaller, keyCaller, listCaller, postCaller] = [
  await newCaller(),
  await newCaller(),
  await newCaller(60),
  await newCaller(),
];

const gateway = await startServed('bench/support/serve-gateway.ts');
const floor = await startServed('bench/support/serve-bare.ts', ['floor']);
const single = await startServed('bench/support/serve-bare.ts', ['single']);
const servers = { gateway, floor, single } as const;
type ServerName = keyof typeof servers;

type Request = autocannon.Request;
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const asOrg = (caller: Caller) => ({ 'x-org': caller.orgId });
let titles = 0;
const nextTitle = () => {
  titles += 1;
  return `Load ${process.pid} ${titles}`;
};
const creating = (headers: Record<string, string>): Request => ({
  method: 'POST',
  path: '/api/tasks',
  headers: { ...headers, 'content-type': 'application/json' },
  setupRequest: (request) => ({ ...request, body: JSON.stringify({ title: nextTitle() }) }),
});
const getting = (caller: Caller, headers: Record<string, string>): Request => ({
  method: 'GET',
  path: `/api/tasks/${caller.taskId}`,
  headers,
});
const listing = (headers: Record<string, string>): Request => ({ method: 'GET', path: '/api/tasks?limit=50', headers });

interface Run {
  rps: number;
  p50: number;
  p99: number;
  cpuMs: number;
  calls: number;
  requests: number;
  failed: number;
}

/** One autocannon run against `server`, for `seconds` or for `amount` requests. */
async function load(server: Served, request: Request, length: { seconds?: number; amount?: number }): Promise<Run> {
  const before = await server.settled();
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    ...(length.amount ? { amount: length.amount } : { duration: length.seconds ?? SECONDS }),
    requests: [request],
  });
  const after = await server.settled();
  const requests = after.answered - before.answered;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMs: (after.cpuMicros - before.cpuMicros) / 1000 / requests,
    calls: callsBetween(before, after) / requests,
    requests,
    failed: result.non2xx + result.errors,
  };
}

interface Figure {
  label: string;
  /** The run of each server that measures this figure (the single read's GET serves both credentials). */
  runs: Partial<Record<ServerName, string>>;
}

const requests: Record<string, { server: ServerName; request: Request }> = {
  'jwt@gateway': { server: 'gateway', request: getting(jwtCaller, bearer(jwtCaller.token)) },
  'jwt@floor': { server: 'floor', request: getting(jwtCaller, bearer(jwtCaller.token)) },
  'key@gateway': { server: 'gateway', request: getting(keyCaller, bearer(keyCaller.key)) },
  'key@floor': { server: 'floor', request: getting(keyCaller, bearer(keyCaller.key)) },
  'get@single': { server: 'single', request: getting(jwtCaller, asOrg(jwtCaller)) },
  'list@gateway': { server: 'gateway', request: listing(bearer(listCaller.token)) },
  'list@floor': { server: 'floor', request: listing(bearer(listCaller.token)) },
  'list@single': { server: 'single', request: listing(asOrg(listCaller)) },
  'post@gateway': { server: 'gateway', request: creating(bearer(postCaller.token)) },
  'post@floor': { server: 'floor', request: creating(bearer(postCaller.token)) },
  'post@single': { server: 'single', request: creating(asOrg(postCaller)) },
};
const figures: Figure[] = [
  { label: 'GET /tasks/{id} with a JWT', runs: { gateway: 'jwt@gateway', floor: 'jwt@floor', single: 'get@single' } },
  {
    label: 'GET /tasks/{id} with an API key',
    runs: { gateway: 'key@gateway', floor: 'key@floor', single: 'get@single' },
  },
  { label: 'GET /tasks?limit=50 (JWT)', runs: { gateway: 'list@gateway', floor: 'list@floor', single: 'list@single' } },
  { label: 'POST /tasks (JWT)', runs: { gateway: 'post@gateway', floor: 'post@floor', single: 'post@single' } },
];

console.log(
  `${CONNECTIONS} connections, ${SECONDS} s a run, ${ROUNDS} rounds; load average ` +
    `${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')} at the start`,
);
const names = Object.keys(requests);
for (const name of names) {
  const { server, request } = requests[name] as { server: ServerName; request: Request };
  const warm = await load(servers[server], request, { seconds: 1 });
  if (warm.failed > 0)
    console.log(`  warning: ${name} answered ${warm.failed} of ${warm.requests} warm-up requests with non-2xx`);
}
const results = new Map<string, Run[]>(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
  for (const name of order) {
    const { server, request } = requests[name] as { server: ServerName; request: Request };
    results.get(name)?.push(await load(servers[server], request, { seconds: SECONDS }));
  }
  console.log(`  round ${round + 1} of ${ROUNDS} done`);
}

const cell = (figure: Spread, digits: number, width: number) => showSpread(figure, digits).padStart(width);
const HEADER =
  `${''.padEnd(30)}${'requests/s'.padStart(18)}${'p50 ms'.padStart(16)}${'p99 ms'.padStart(18)}` +
  `${'CPU ms/request'.padStart(22)}${'DynamoDB calls'.padStart(16)}  non-2xx`;

function row(label: string, runs: Run[]): string {
  const of = (pick: (run: Run) => number) => spread(runs.map(pick));
  const failed = runs.reduce((sum, run) => sum + run.failed, 0);
  return (
    `  ${label.padEnd(28)}${cell(
      of((run) => run.rps),
      0,
      18,
    )}${cell(
      of((run) => run.p50),
      0,
      16,
    )}` +
    `${cell(
      of((run) => run.p99),
      0,
      18,
    )}${cell(
      of((run) => run.cpuMs),
      2,
      22,
    )}` +
    `${of((run) => run.calls)
      .median.toFixed(2)
      .padStart(16)}  ${failed}`
  );
}

/** The ratio of two servers' figures, round by round: `0.15× (0.12–0.18)` (median, then min–max). */
function ratio(top: Run[], bottom: Run[], pick: (run: Run) => number): string {
  const figure = spread(top.map((run, index) => pick(run) / pick(bottom[index] as Run)));
  return `${figure.median.toFixed(2)}× (${figure.min.toFixed(2)}–${figure.max.toFixed(2)})`;
}

const SERVER_LABELS: Record<ServerName, string> = {
  gateway: 'gateway (the service)',
  floor: 'floor (no middleware)',
  single: 'single DynamoDB call',
};
console.log(
  '\nTargets: gateway ≥ 0.7× the floor’s requests/s and p99 ≤ 1.5× the floor’s; ' + 'Node CPU ≤ 2 ms a request.',
);
for (const figure of figures) {
  console.log(`\n${figure.label.padEnd(30)}${HEADER.slice(30)}`);
  for (const [server, run] of Object.entries(figure.runs) as Array<[ServerName, string]>) {
    console.log(row(SERVER_LABELS[server], results.get(run) ?? []));
  }
  const gatewayRuns = results.get(figure.runs.gateway as string) ?? [];
  for (const other of ['floor', 'single'] as const) {
    const runs = results.get(figure.runs[other] as string) ?? [];
    console.log(
      `  gateway ÷ ${other.padEnd(7)} requests/s ${ratio(gatewayRuns, runs, (run) => run.rps)}, ` +
        `p99 ${ratio(gatewayRuns, runs, (run) => run.p99)}`,
    );
  }
}

// Usage growth: the same API-key GET in an organization after 100 prior API-key requests and in one after
// PRIOR, alternating. The 100 side is a fresh organization each round; the grown one keeps growing.
console.log(`\nAPI-key GET /tasks/{id} through the gateway as usage grows (${PRIOR} prior requests)`);
const grown = await newCaller();
const started = performance.now();
const prior = await load(gateway, getting(grown, bearer(grown.key)), { amount: PRIOR });
console.log(
  `  ${prior.requests} prior requests sent in ${((performance.now() - started) / 1000).toFixed(0)} s ` +
    `(${prior.failed} non-2xx)`,
);
let grownCount = prior.requests;
const grownCounts: number[] = [];
const after100: Run[] = [];
const afterMany: Run[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  const fresh = await newCaller();
  await load(gateway, getting(fresh, bearer(fresh.key)), { amount: 100 });
  const measureFresh = async () => after100.push(await load(gateway, getting(fresh, bearer(fresh.key)), {}));
  const measureGrown = async () => {
    grownCounts.push(grownCount);
    const run = await load(gateway, getting(grown, bearer(grown.key)), {});
    grownCount += run.requests;
    afterMany.push(run);
  };
  if (round % 2 === 0) {
    await measureFresh();
    await measureGrown();
  } else {
    await measureGrown();
    await measureFresh();
  }
}
console.log(HEADER);
console.log(row('after 100 prior requests', after100));
const counts = spread(grownCounts);
console.log(row(`after ${counts.min}–${counts.max}`, afterMany));
console.log(
  `  after ${PRIOR} ÷ after 100: requests/s ${ratio(afterMany, after100, (run) => run.rps)}, ` +
    `p99 ${ratio(afterMany, after100, (run) => run.p99)} (target: the same)`,
);
console.log(
  `\nload average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')} at the end`,
);

await Promise.all([gateway.stop(), floor.stop(), single.stop()]);
await dynamo.stop();
process.exit(0);
