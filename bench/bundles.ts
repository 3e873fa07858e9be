/**
 * Every function bundled as `npm run package` bundles it (the serverless-esbuild options of serverless.yml's
 * `custom.esbuild`), beside a bare handler that only reads one DynamoDB item: minified size, the time a new
 * `node` process takes to import the bundle (what a cold start pays before the first event), the heavy
 * clients each bundle carries and the packages its bytes come from. Prints the figures beside the targets;
 * asserts nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { parse } from 'yaml';
import { readServerlessFunctions } from '#infra/local/serverless-routes';
import { cloudFormationTags } from '#infra/local/yaml-tags';

const RUNS = 15;
const SIZE_TARGET = 1.5;
const IMPORT_TARGET = 1.25;

interface ServerlessYml {
  custom: { esbuild: Record<string, unknown> };
  functions: Record<string, { environment?: Record<string, unknown> }>;
}
const yml = parse(readFileSync('serverless.yml', 'utf8'), { customTags: cloudFormationTags }) as ServerlessYml;

// The plugin's own keys, which serverless-esbuild removes before it calls esbuild (its bundle.ts).
const PLUGIN_KEYS = [
  'concurrency',
  'zipConcurrency',
  'exclude',
  'nativeZip',
  'packager',
  'packagePath',
  'watch',
  'keepOutputDirectory',
  'packagerOptions',
  'installExtraArgs',
  'outputFileExtension',
  'outputBuildFolder',
  'outputWorkFolder',
  'nodeExternals',
  'skipBuild',
  'skipRebuild',
  'skipBuildExcludeFns',
  'stripEntryResolveExtensions',
  'disposeContext',
];
const custom = yml.custom.esbuild;
const extension = (custom.outputFileExtension as string | undefined) ?? '.js';
const exclude = (custom.exclude as string[] | undefined) ?? ['aws-sdk'];
const buildOptions: BuildOptions = {
  ...Object.fromEntries(Object.entries(custom).filter(([key]) => !PLUGIN_KEYS.includes(key))),
  external: [...((custom.external as string[] | undefined) ?? []), ...(exclude.includes('*') ? [] : exclude)],
  ...(extension === '.js' ? {} : { outExtension: { '.js': extension } }),
  metafile: true,
  logLevel: 'silent',
};

const work = mkdtempSync(join(tmpdir(), 'aos-bench-bundles-'));
const BASELINE_SOURCE = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const documents = DynamoDBDocumentClient.from(new DynamoDBClient({}));

export const handler = async (event: { pk: string; sk: string }) => {
  const { Item } = await documents.send(
    new GetCommand({ TableName: process.env.TABLE_NAME, Key: { pk: event.pk, sk: event.sk } }),
  );
  return { statusCode: Item ? 200 : 404, body: JSON.stringify(Item ?? null) };
};
`;
mkdirSync(join(work, 'src'));
writeFileSync(join(work, 'src', 'baseline.ts'), BASELINE_SOURCE);

interface Target {
  name: string;
  entry: string;
  http: boolean;
  kmsExpected: boolean;
}
const targets: Target[] = [
  { name: 'baseline', entry: join(work, 'src', 'baseline.ts'), http: false, kmsExpected: false },
  ...readServerlessFunctions().map((fn) => ({
    name: fn.name,
    entry: `${fn.module}.ts`,
    http: fn.module.startsWith('functions/http/'),
    // Credentials are read and written by the functions serverless.yml gives the KMS key to.
    kmsExpected: yml.functions[fn.name]?.environment?.KMS_KEY_ID !== undefined,
  })),
];

interface Bundle extends Target {
  file: string;
  bytes: number;
  metafile: Metafile;
  text: string;
}

const buildStarted = performance.now();
const bundles: Bundle[] = await Promise.all(
  targets.map(async (target) => {
    const outdir = join(work, 'out', target.name);
    const result = await build({
      ...buildOptions,
      entryPoints: [target.entry],
      outdir,
      // The baseline lives outside the repository; its imports resolve from the project's node_modules.
      nodePaths: [resolve('node_modules')],
    });
    const file = join(outdir, `${basename(target.entry, '.ts')}${extension}`);
    if (!result.metafile) throw new Error(`esbuild gave no metafile for ${target.entry}`);
    return { ...target, file, bytes: statSync(file).size, metafile: result.metafile, text: readFileSync(file, 'utf8') };
  }),
);
const buildSeconds = (performance.now() - buildStarted) / 1000;

/** The package a metafile input belongs to: the last node_modules segment, or `(app)` for our code. */
function packageOf(input: string): string {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return '(app)';
  const parts = input.slice(at + 'node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? input);
}

function inputsOf(bundle: Bundle): Array<[string, number]> {
  const output = Object.values(bundle.metafile.outputs).find((out) => out.entryPoint !== undefined);
  return Object.entries(output?.inputs ?? {})
    .map(([path, input]): [string, number] => [path, input.bytesInOutput])
    .filter(([, bytes]) => bytes > 0);
}

function topPackages(bundle: Bundle): Array<[string, number]> {
  const byPackage = new Map<string, number>();
  for (const [path, bytes] of inputsOf(bundle)) {
    byPackage.set(packageOf(path), (byPackage.get(packageOf(path)) ?? 0) + bytes);
  }
  return [...byPackage.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5);
}

// Markers in the minified text: client class names and endpoints survive minification as strings.
// (Package names are no marker: the bundled package.json lists every dependency.)
const CLIENT_MARKERS: Array<[string, RegExp]> = [
  ['SES', /SESv2Client/],
  ['KMS', /KMSClient|TrentService/],
  ['SQS', /SQSClient|AmazonSQS/],
  ['Scheduler', /SchedulerClient/],
  ['CloudWatch Logs', /CloudWatchLogsClient|Logs_20140328/],
  ['S3', /S3Client|AmazonS3/],
  ['Stripe', /api\.stripe\.com/],
  ['AI SDK', /vercel\.ai\.error/],
];
const clientsOf = (bundle: Bundle): string[] =>
  CLIENT_MARKERS.filter(([, marker]) => marker.test(bundle.text)).map(([name]) => name);

/** Zod locales other than English in the bundle (the named `z` import brings all of them). */
const zodLocalesOf = (bundle: Bundle): number =>
  inputsOf(bundle).filter(([path]) => /zod\/v4\/locales\/(?!en\.|index\.)/.test(path)).length;

/** Whether a bundled module of ours matches `call`: sends email (SES belongs), runs an agent (the AI SDK does). */
const calls = (bundle: Bundle, call: RegExp): boolean =>
  inputsOf(bundle).some(([path]) => !path.includes('node_modules/') && call.test(readFileSync(resolve(path), 'utf8')));
const sendsEmail = (bundle: Bundle): boolean => calls(bundle, /\bemail\.send\(/);
const runsAgents = (bundle: Bundle): boolean => calls(bundle, /\brunner\.run\(/);

// A fresh process per import, the way a cold start loads the handler; aws mode, as in Lambda.
const runner = join(work, 'import-time.mjs');
writeFileSync(
  runner,
  'const started = process.hrtime.bigint();\n' +
    'await import(process.argv[2]);\n' +
    'console.log(Number(process.hrtime.bigint() - started) / 1e6);\n',
);
const childEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  APP_MODE: 'aws',
  AWS_REGION: 'eu-west-1',
  TABLE_NAME: 'agent-ops-bench',
  JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256-0123456789',
  KMS_KEY_ID: 'alias/agent-ops-bench',
  WEBHOOK_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/agent-ops-bench',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};
const times = new Map<string, number[]>(bundles.map((bundle) => [bundle.name, []]));
const failures = new Map<string, string>();
const importStarted = performance.now();
// Round-robin, so that a busy moment of the machine spreads over every bundle instead of one.
for (let run = 0; run < RUNS; run++) {
  for (const bundle of bundles) {
    if (failures.has(bundle.name)) continue;
    const child = spawnSync(process.execPath, [runner, pathToFileURL(bundle.file).href], {
      env: childEnv,
      encoding: 'utf8',
    });
    const ms = Number(child.stdout.trim().split('\n').pop());
    if (child.status !== 0 || !Number.isFinite(ms)) failures.set(bundle.name, child.stderr.trim().split('\n')[0] ?? '');
    else times.get(bundle.name)?.push(ms);
  }
}
const importSeconds = (performance.now() - importStarted) / 1000;

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

const [base] = bundles;
if (!base) throw new Error('no baseline bundle');
const baseMedian = median(times.get(base.name) ?? []);
const verdict = (ratio: number, limit: number) => (ratio <= limit ? 'ok' : 'over');

const rows = bundles.map((bundle) => {
  const ms = times.get(bundle.name) ?? [];
  const sizeRatio = bundle.bytes / base.bytes;
  const timeRatio = median(ms) / baseMedian;
  const clients = clientsOf(bundle);
  const unexpected = [
    clients.includes('SES') && !sendsEmail(bundle) ? 'SES' : '',
    clients.includes('KMS') && !bundle.kmsExpected ? 'KMS' : '',
    clients.includes('Stripe') && bundle.name !== 'billing' ? 'Stripe' : '',
    clients.includes('CloudWatch Logs') && bundle.name !== 'logs' ? 'CloudWatch Logs' : '',
    clients.includes('S3') && bundle.name !== 'backups' ? 'S3' : '',
    clients.includes('AI SDK') && !runsAgents(bundle) ? 'AI SDK' : '',
  ].filter(Boolean);
  const locales = zodLocalesOf(bundle);
  return [
    bundle.name,
    (bundle.bytes / 1024).toFixed(0),
    `${sizeRatio.toFixed(2)}x`,
    failures.has(bundle.name) ? 'import failed' : ms.length ? `${Math.min(...ms).toFixed(0)}` : '-',
    ms.length ? median(ms).toFixed(0) : '-',
    ms.length ? Math.max(...ms).toFixed(0) : '-',
    ms.length ? `${timeRatio.toFixed(2)}x` : '-',
    bundle.http ? `size ${verdict(sizeRatio, SIZE_TARGET)}, import ${verdict(timeRatio, IMPORT_TARGET)}` : '',
    [...clients, ...(locales ? [`zod locales: ${locales}`] : [])].join(' ') || '-',
    unexpected.length ? `not needed: ${unexpected.join(' ')}` : 'ok',
  ];
});

console.log(
  `bundles: ${bundles.length - 1} functions + baseline, built as serverless.yml's custom.esbuild builds them`,
);
console.log(
  `node ${process.version}; import time: a new process per import, ${RUNS} runs each; ` +
    `build ${buildSeconds.toFixed(1)} s, imports ${importSeconds.toFixed(0)} s\n`,
);
console.log(
  table(
    [
      'function',
      'KB',
      'size/base',
      'min ms',
      'median',
      'max',
      'import/base',
      `HTTP targets (≤${SIZE_TARGET}x, ≤${IMPORT_TARGET}x)`,
      'heavy clients',
      'client targets',
    ],
    rows,
  ),
);
console.log(
  '\nClient targets: SES only where email is sent (a bundled module calls email.send), KMS only where credentials ' +
    'are read or written (functions given KMS_KEY_ID in serverless.yml), Stripe only in billing, ' +
    'CloudWatch Logs only in logs, S3 only in backups, ' +
    'the AI SDK only where agents run (a bundled module calls runner.run).',
);
for (const [name, message] of failures) console.log(`import failed: ${name}: ${message}`);

console.log('\nTop 5 packages per bundle (KB of minified output):\n');
console.log(
  table(
    ['function', 'top packages'],
    bundles.map((bundle) => [
      bundle.name,
      topPackages(bundle)
        .map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(0)}`)
        .join(', '),
    ]),
  ),
);
rmSync(work, { recursive: true, force: true });
