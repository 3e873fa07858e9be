/**
 * A cold start as a caller meets it: a new `node` process imports the tasks function bundled as
 * `npm run package` bundles it (aws mode, against DynamoDB Local), then serves GET /api/tasks/{id} with a
 * JWT, its first request and a second one. What a bundle loads only at first use (a chunk, the SDK's
 * first connection) shows in the first request; the import alone is bench/bundles.ts's. Prints the
 * figures; asserts nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { AWS_MODE_ENV, importRuns, spread, table } from '#bench/support/fresh-process';
import { benchTable } from '#bench/support/local-table';
import { functionBuild } from '#infra/build/esbuild-options';

const RUNS = 15;
const TABLE = 'bench-cold-request';

// The children run in aws mode with this secret: the parent signs the token with the same one.
process.env.JWT_SECRET = AWS_MODE_ENV.JWT_SECRET;
const dynamo = await benchTable(TABLE);
const work = mkdtempSync(join(tmpdir(), 'aos-bench-cold-request-'));
try {
  const { call, newUser } = await import('#tests/support/identity');
  const { handler: tasks } = await import('#functions/http/tasks');
  const owner = await newUser('cold');
  const created = await call(tasks, 'POST', '/tasks', { token: owner.token, body: { title: 'Cold start' } });
  if (created.status !== 201) throw new Error(`seeding failed: ${JSON.stringify(created.body)}`);

  const { options, extension } = functionBuild();
  const outdir = join(work, 'out');
  await build({ ...options, entryPoints: ['functions/http/tasks.ts'], outdir, nodePaths: [resolve('node_modules')] });

  const probe = join(work, 'probe.mjs');
  writeFileSync(
    probe,
    `const ms = (since) => Number(process.hrtime.bigint() - since) / 1e6;
export default async function (module) {
  const { TOKEN, TASK_ID } = process.env;
  const event = () => ({
    version: '2.0', rawPath: '/api/tasks/' + TASK_ID, rawQueryString: '', isBase64Encoded: false,
    headers: { host: 'bench.example', authorization: 'Bearer ' + TOKEN },
    requestContext: { http: { method: 'GET', path: '/api/tasks/' + TASK_ID, sourceIp: '192.0.2.1' } },
  });
  const context = () => ({ getRemainingTimeInMillis: () => 29000, awsRequestId: 'bench', functionName: 'tasks' });
  let started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const first = await module.handler(event(), context());
  const firstMs = ms(started);
  const used = process.cpuUsage(cpu);
  started = process.hrtime.bigint();
  const second = await module.handler(event(), context());
  if (first.statusCode !== 200 || second.statusCode !== 200) throw new Error('answered ' + first.statusCode);
  return { firstMs, firstCpu: (used.user + used.system) / 1000, secondMs: ms(started) };
}
`,
  );
  const { samples, failures } = importRuns([{ name: 'tasks', file: join(outdir, `tasks${extension}`) }], {
    runs: RUNS,
    workDir: work,
    probe,
    env: {
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      TABLE_NAME: TABLE,
      RATE_LIMIT_TIER: 'enterprise',
      TOKEN: owner.token,
      TASK_ID: String(created.body.data.id),
    },
  });
  const runs = samples.get('tasks') ?? [];
  const probed = (key: string) => runs.map((sample) => sample.probe?.[key] ?? Number.NaN);
  console.log(
    `cold request: functions/http/tasks bundled as serverless.yml's custom.esbuild builds it, aws mode, ` +
      `DynamoDB Local; node ${process.version}, a new process per run, ${RUNS} runs; ms as min median max\n`,
  );
  console.log(
    table(
      ['import ms', 'import cpu', 'first GET ms', 'first GET cpu', 'import + first GET ms', 'second GET ms'],
      [
        [
          spread(runs.map((sample) => sample.wallMs)).join(' '),
          spread(runs.map((sample) => sample.cpuMs)).join(' '),
          spread(probed('firstMs')).join(' '),
          spread(probed('firstCpu')).join(' '),
          spread(runs.map((sample) => sample.wallMs + (sample.probe?.firstMs ?? Number.NaN))).join(' '),
          spread(probed('secondMs'), 1).join(' '),
        ],
      ],
    ),
  );
  for (const [name, message] of failures) console.log(`failed: ${name}: ${message}`);
} finally {
  await dynamo.stop();
  rmSync(work, { recursive: true, force: true });
}
