import * as fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '#lib/http/route';
import { buildOpenApiDocument } from '#lib/openapi/document';
import { allRoutes } from '#lib/routes/index';
import { type CallerKind, type FuzzCase, type FuzzTarget, fuzzCases } from '#tests/support/fuzz-cases';
import { type FuzzCaller, fuzzCaller, tableChanges, tableSnapshot } from '#tests/support/fuzz-fixtures';
import { preview } from '#tests/support/fuzz-values';
import { newUser } from '#tests/support/identity';
import { type OpenApiDocument, operationsOf, SchemaJudge } from '#tests/support/openapi-schema';
import { type RawAnswer, sendTo } from '#tests/support/registry';

/**
 * Schema-driven fuzzing of every operation of the OpenAPI document the service serves (built in process
 * from the route registry, as GET /docs/openapi.json is). For each operation, mapped back to its registry
 * route and called through the function serverless.yml binds it to, fast-check generates requests the
 * document forbids (tests/support/fuzz-cases.ts): wrong types, missing required fields, extra fields
 * where the schema is closed, strings of 100 KB, JSON nested 40 and 3,000 deep, NUL and lone surrogates,
 * negative, huge and fractional numbers, path ids that name nothing (`__proto__`, `..%2F`, `%00`, very
 * long ones), query values outside their schema, bodies in other formats or none, and credentials that do
 * not hold: as an anonymous caller, and as ordinary users acting in their own organizations, which hold
 * one record of each kind so that real ids are named too. Every answer must be a 4xx in the error
 * envelope with X-Trace-Id, within 10 s (a 401 only where no credential holds), and the table must hold
 * exactly what it held before, but for the rate-limit windows (tests/support/fuzz-fixtures.ts says why).
 *
 * Runs: `FUZZ_RUNS` cases per route and kind of caller (default 20, the CI run: 7,400 requests, as 10 of
 * the 195 routes take no input that could be wrong); `FUZZ_SEED` (default below) picks the cases and is
 * printed, so that a failure can be replayed. The long run, 74,000 requests in about two minutes:
 * `FUZZ_RUNS=200 npx vitest run tests/integration/fuzz.test.ts`.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 424_242);
const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const ANSWER_WITHIN_MS = 10_000;
const CONCURRENCY = 8;
/**
 * Authenticated cases are shared among this many users, so that no organization sends more than about ten
 * cases of a route a minute: task creation has its own limit of 30 a minute, and a 429 would answer for
 * the limit, not for the input.
 */
const CALLERS = Math.max(2, Math.ceil(RUNS / 10));
/** Path parameters that name something other than a record, where any value the schema allows is valid. */
const NAMES_NOT_RECORDS = new Set(['/job-queue/{queue}']);

/** Failures shown in full; the summary line counts them all. */
const SHOWN = 100;

interface Batch {
  def: RouteDef;
  kind: CallerKind;
  cases: fc.Arbitrary<FuzzCase>;
  seed: number;
  /** Whether the route, let through, would end the caller's session, account or organization. */
  last: boolean;
}

interface Tally {
  requests: number;
  statuses: Map<number, number>;
  covered: Set<string>;
  failures: string[];
}

interface Outcome {
  route: string;
  kind: CallerKind;
  fuzz: FuzzCase;
  status: number;
  problem?: string;
  answer: string;
}

let admin: Awaited<ReturnType<typeof newUser>>;
let callers: FuzzCaller[];

beforeAll(async () => {
  // The file's first user is the instance admin; the callers are ordinary users, and the admin's
  // organization is one they are not members of.
  admin = await newUser('fuzzadmin');
  callers = [];
  for (let index = 0; index < CALLERS; index += 1) callers.push(await fuzzCaller(`fuzzer${index}`));
}, 120_000);

describe('fuzzing every operation of the OpenAPI document', () => {
  it('answers every forbidden request with a 4xx in the error envelope, in time, changing nothing', async () => {
    const document = buildOpenApiDocument(allRoutes) as unknown as OpenApiDocument;
    const judge = new SchemaJudge(document);
    const routes = new Map(allRoutes.map((def) => [`${def.method} ${def.path}`, def]));
    const operations = operationsOf(document);
    const unmapped = operations.filter((op) => !routes.has(`${op.method} ${op.path}`));
    const undocumented = allRoutes.filter(
      (def) => !operations.some((op) => op.method === def.method && op.path === def.path),
    );

    const batches: Batch[] = [];
    const noInput: string[] = [];
    for (const { method, path, operation } of operations) {
      const def = routes.get(`${method} ${path}`);
      if (!def) continue;
      for (const kind of ['anonymous', 'authenticated'] as const) {
        for (const [index, caller] of callers.entries()) {
          const target: FuzzTarget = {
            def,
            operation,
            judge,
            kind,
            caller,
            foreignOrgId: admin.orgId,
            namesNotRecords: NAMES_NOT_RECORDS,
          };
          const cases = fuzzCases(target);
          if (!cases) {
            if (index === 0) noInput.push(`${method} ${path} (${kind})`);
            break;
          }
          const seed = seedOf(`${SEED}|${method} ${path}|${kind}|${index}`);
          batches.push({ def, kind, cases, seed, last: aboutTheCaller(def, caller) });
        }
      }
    }
    const before = await tableSnapshot();

    const started = performance.now();
    const tally: Tally = { requests: 0, statuses: new Map(), covered: new Set(), failures: [] };
    // Requests that could end the caller's session, account or organization go last: were one of them let
    // through, the answers to the others would still say something about their input.
    await inParallel(
      batches.filter((batch) => !batch.last),
      (batch) => run(batch, tally),
    );
    await inParallel(
      batches.filter((batch) => batch.last),
      (batch) => run(batch, tally),
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const changes = tableChanges(before, await tableSnapshot());

    console.info(
      `fuzz: seed ${SEED} (FUZZ_SEED), ${RUNS} runs per route and caller (FUZZ_RUNS): ${tally.covered.size} of ` +
        `${operations.length} routes covered, ${tally.requests} requests in ${seconds} s, statuses ` +
        `${JSON.stringify(Object.fromEntries([...tally.statuses].sort(([a], [b]) => a - b)))}, ` +
        `${tally.failures.length} failed; no input to get wrong: ${noInput.join(', ') || 'none'}`,
    );
    // Soft: one run shows every kind of failure at once.
    expect.soft(unmapped.map((op) => `${op.method} ${op.path}`)).toEqual([]);
    expect.soft(undocumented.map((def) => `${def.method} ${def.path}`)).toEqual([]);
    expect.soft(tally.failures.slice(0, SHOWN)).toEqual([]);
    expect.soft(changes).toEqual([]);
  }, 900_000);
});

/**
 * Generates one route's cases for one caller and sends them one after another, keeping the counts and the
 * failures only (the cases of a long run would not fit in memory at once).
 */
async function run(batch: Batch, tally: Tally): Promise<void> {
  const runs = Math.ceil(RUNS / callers.length);
  for (const fuzz of fc.sample(batch.cases, { seed: batch.seed, numRuns: runs })) {
    const outcome = await send({ def: batch.def, kind: batch.kind, fuzz });
    tally.requests += 1;
    tally.statuses.set(outcome.status, (tally.statuses.get(outcome.status) ?? 0) + 1);
    tally.covered.add(outcome.route);
    if (outcome.problem) tally.failures.push(report(outcome));
  }
}

async function send(job: { def: RouteDef; kind: CallerKind; fuzz: FuzzCase }): Promise<Outcome> {
  const { def, kind, fuzz } = job;
  const outcome = { route: `${def.method} ${def.path}`, kind, fuzz };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ANSWER_WITHIN_MS);
  });
  try {
    const { path, ...options } = fuzz.request;
    const answer = await Promise.race([sendTo(def, path, options), timeout]);
    if (answer === 'timeout') {
      return { ...outcome, status: 0, problem: `no answer within ${ANSWER_WITHIN_MS} ms`, answer: '' };
    }
    return { ...outcome, status: answer.status, answer: answer.body, problem: problemOf(answer, fuzz) };
  } catch (error) {
    return { ...outcome, status: 0, problem: `the call threw: ${(error as Error).message}`, answer: '' };
  } finally {
    clearTimeout(timer);
  }
}

function problemOf(answer: RawAnswer, fuzz: FuzzCase): string | undefined {
  if (answer.status < 400 || answer.status >= 500) return `answered ${answer.status}, not a 4xx`;
  if (answer.status === 401 && fuzz.credentialHolds) return 'answered 401 to a credential that holds';
  // Not the service's fault, but then the answer says nothing of the input: CALLERS spreads the load.
  if (answer.status === 429) return 'answered 429: the suite went over a rate limit';
  if (!answer.headers['X-Trace-Id']) return 'no X-Trace-Id';
  try {
    const { error } = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const envelope =
      typeof error?.code === 'string' && typeof error.message === 'string' && Array.isArray(error.details);
    return envelope ? undefined : 'not the error envelope';
  } catch {
    return 'not JSON';
  }
}

function report(outcome: Outcome): string {
  const { request, faults, extras } = outcome.fuzz;
  const query = request.query ? `?${new URLSearchParams(request.query)}` : '';
  return [
    `${outcome.route} (${outcome.kind}): ${outcome.problem}`,
    `  faults: ${faults.join('; ')}`,
    `  extras: ${extras.join('; ') || 'none'}`,
    `  request: ${preview(`${request.path}${query}`)} from ${request.sourceIp}`,
    `  headers: ${Object.entries(request.headers)
      .map(([name, value]) => `${name}: ${preview(value, 60)}`)
      .join(', ')}`,
    `  body: ${preview(request.body, 400)}`,
    `  answer: ${outcome.answer.slice(0, 400)}`,
  ].join('\n');
}

/** Whether a route changes the caller's own session, account or organization when it succeeds. */
function aboutTheCaller(def: RouteDef, caller: FuzzCaller): boolean {
  if (def.method === 'GET') return false;
  if (/\/(me|logout)$/.test(def.path)) return true;
  const own = [String(caller.user.id), caller.user.orgId];
  return [...caller.realIds].some(([prefix, value]) => def.path.startsWith(prefix) && own.includes(value));
}

async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** A 32-bit seed of its own for each route, kind and caller: adding a route leaves the others' cases as they were. */
function seedOf(text: string): number {
  let hash = 2_166_136_261;
  for (let index = 0; index < text.length; index += 1) hash = Math.imul(hash ^ text.charCodeAt(index), 16_777_619);
  return hash | 0;
}
