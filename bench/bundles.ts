/**
 * Every function bundled as `npm run package` bundles it (serverless.yml's `custom.esbuild`, read by
 * infra/build/esbuild-options.ts), beside a bare handler that only reads one DynamoDB item: the bytes a
 * cold start loads (the bundle and the chunks it imports statically) and those it loads only when a route
 * asks for them (chunks behind an import()), the time a new `node` process takes to import the bundle
 * (wall and CPU: what a cold start pays before the first event), the heavy clients each function carries
 * and the packages its loaded bytes come from. Prints the figures beside the targets; asserts nothing.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { AWS_MODE_ENV, importRuns, median, spread, table } from '#bench/support/fresh-process';
import { functionBuild, serverlessYml } from '#infra/build/esbuild-options';
import { readServerlessFunctions } from '#infra/local/serverless-routes';

const RUNS = 15;
const SIZE_TARGET = 1.5;
const IMPORT_TARGET = 1.25;

const yml = serverlessYml();
const { options } = functionBuild();
const buildOptions: BuildOptions = { ...options, metafile: true, logLevel: 'silent' };
/**
 * The bare handler as the targets were first measured against it (535 KB): the SDK's CommonJS builds, one
 * file, no plugins. Printed for comparison; the targets use the baseline built as the functions are.
 */
const firstBuildOptions: BuildOptions = { ...buildOptions, mainFields: undefined, splitting: false, plugins: [] };

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
  options: BuildOptions;
}
const FIRST_BASELINE = 'baseline, first build';
const targets: Target[] = [
  { name: 'baseline', entry: join(work, 'src', 'baseline.ts'), http: false, kmsExpected: false, options: buildOptions },
  {
    name: FIRST_BASELINE,
    entry: join(work, 'src', 'baseline.ts'),
    http: false,
    kmsExpected: false,
    options: firstBuildOptions,
  },
  ...readServerlessFunctions().map((fn) => ({
    name: fn.name,
    entry: `${fn.module}.ts`,
    http: fn.module.startsWith('functions/http/'),
    // Credentials are read and written by the functions serverless.yml gives the KMS key to.
    kmsExpected: yml.functions[fn.name]?.environment?.KMS_KEY_ID !== undefined,
    options: buildOptions,
  })),
];

interface Output {
  file: string;
  bytes: number;
  inputs: Array<[string, number]>;
}

interface Bundle extends Target {
  /** The entry file, then the chunks it imports statically: what a cold start loads. */
  loaded: Output[];
  /** Chunks behind an import(), loaded when a route first needs them. */
  lazy: Output[];
}

const sum = (outputs: Output[]) => outputs.reduce((total, output) => total + output.bytes, 0);

/** Splits a build's outputs into what importing the entry loads and what it loads only on import(). */
function outputsOf(metafile: Metafile, entryPoint: string): Pick<Bundle, 'loaded' | 'lazy'> {
  const outputs = new Map(Object.entries(metafile.outputs).map(([path, output]) => [resolve(path), output]));
  // The chunks of import() targets name an entry point too: the entry is the output of the one built.
  const entry = [...outputs.entries()].find(
    ([, output]) => output.entryPoint !== undefined && resolve(output.entryPoint) === resolve(entryPoint),
  )?.[0];
  if (!entry) throw new Error('esbuild gave no entry output');
  const loaded: string[] = [];
  const visit = (path: string) => {
    if (loaded.includes(path)) return;
    loaded.push(path);
    for (const imported of outputs.get(path)?.imports ?? []) {
      if (!imported.external && imported.kind === 'import-statement') visit(resolve(imported.path));
    }
  };
  visit(entry);
  const describe = (path: string): Output => {
    const output = outputs.get(path);
    const inputs = Object.entries(output?.inputs ?? {}).map(([input, { bytesInOutput }]): [string, number] => [
      input,
      bytesInOutput,
    ]);
    return { file: path, bytes: output?.bytes ?? 0, inputs: inputs.filter(([, bytes]) => bytes > 0) };
  };
  const code = [...outputs.keys()].filter((path) => !path.endsWith('.map'));
  return {
    loaded: loaded.map(describe),
    lazy: code.filter((path) => !loaded.includes(path)).map(describe),
  };
}

const buildStarted = performance.now();
const bundles: Bundle[] = await Promise.all(
  targets.map(async (target, index) => {
    const result = await build({
      ...target.options,
      entryPoints: [target.entry],
      outdir: join(work, 'out', String(index)),
      // The baseline lives outside the repository; its imports resolve from the project's node_modules.
      nodePaths: [resolve('node_modules')],
    });
    if (!result.metafile) throw new Error(`esbuild gave no metafile for ${target.entry}`);
    return { ...target, ...outputsOf(result.metafile, target.entry) };
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

function topPackages(outputs: Output[]): Array<[string, number]> {
  const byPackage = new Map<string, number>();
  for (const [path, bytes] of outputs.flatMap((output) => output.inputs)) {
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
const textOf = (outputs: Output[]) => outputs.map((output) => readFileSync(output.file, 'utf8')).join('\n');
const clientsIn = (text: string): string[] =>
  CLIENT_MARKERS.filter(([, marker]) => marker.test(text)).map(([name]) => name);

/** Zod locales other than English loaded at import (the named `z` import brings all of them). */
const zodLocalesOf = (outputs: Output[]): number =>
  outputs.flatMap((output) => output.inputs).filter(([path]) => /zod\/v4\/locales\/(?!en\.|index\.)/.test(path)).length;

/** Whether a bundled module of ours matches `call`: sends email (SES belongs), runs an agent (the AI SDK does). */
const calls = (bundle: Bundle, call: RegExp): boolean =>
  [...bundle.loaded, ...bundle.lazy]
    .flatMap((output) => output.inputs)
    .some(([path]) => !path.includes('node_modules/') && call.test(readFileSync(resolve(path), 'utf8')));

const importStarted = performance.now();
const { samples, failures } = importRuns(
  bundles.map((bundle) => ({ name: bundle.name, file: bundle.loaded[0]?.file ?? '' })),
  { runs: RUNS, workDir: work, env: AWS_MODE_ENV },
);
const importSeconds = (performance.now() - importStarted) / 1000;

const byName = (name: string) => bundles.find((bundle) => bundle.name === name) as Bundle;
const wallOf = (name: string) => (samples.get(name) ?? []).map((sample) => sample.wallMs);
const cpuOf = (name: string) => (samples.get(name) ?? []).map((sample) => sample.cpuMs);
const ratiosTo = (reference: string) => {
  const base = byName(reference);
  return (bundle: Bundle) => ({
    size: sum(bundle.loaded) / sum(base.loaded),
    wall: median(wallOf(bundle.name)) / median(wallOf(reference)),
    cpu: median(cpuOf(bundle.name)) / median(cpuOf(reference)),
  });
};
const toBaseline = ratiosTo('baseline');
const toFirstBaseline = ratiosTo(FIRST_BASELINE);
const verdict = (ratio: number, limit: number) => (ratio <= limit ? 'ok' : 'over');
const kb = (bytes: number) => (bytes / 1024).toFixed(0);

const rows = bundles.map((bundle) => {
  const ratio = toBaseline(bundle);
  const loadedClients = clientsIn(textOf(bundle.loaded));
  const lazyClients = clientsIn(textOf(bundle.lazy)).filter((client) => !loadedClients.includes(client));
  const carried = [...loadedClients, ...lazyClients];
  const unexpected = [
    carried.includes('SES') && !calls(bundle, /\bemail\.send\(/) ? 'SES' : '',
    carried.includes('KMS') && !bundle.kmsExpected ? 'KMS' : '',
    carried.includes('Stripe') && !calls(bundle, /\bpayments\.create\w*\(/) ? 'Stripe' : '',
    carried.includes('CloudWatch Logs') && bundle.name !== 'logs' ? 'CloudWatch Logs' : '',
    carried.includes('S3') && bundle.name !== 'backups' ? 'S3' : '',
    carried.includes('AI SDK') && !calls(bundle, /\brunner\.run\(/) ? 'AI SDK' : '',
  ].filter(Boolean);
  const locales = zodLocalesOf(bundle.loaded);
  const measured = (samples.get(bundle.name) ?? []).length > 0;
  return [
    bundle.name,
    kb(sum(bundle.loaded)),
    `${ratio.size.toFixed(2)}x`,
    bundle.lazy.length ? kb(sum(bundle.lazy)) : '-',
    ...(failures.has(bundle.name) ? ['import failed', '', ''] : spread(wallOf(bundle.name))),
    measured ? `${ratio.wall.toFixed(2)}x` : '-',
    ...spread(cpuOf(bundle.name)),
    measured ? `${ratio.cpu.toFixed(2)}x` : '-',
    bundle.http
      ? `size ${verdict(ratio.size, SIZE_TARGET)}, import ${verdict(ratio.wall, IMPORT_TARGET)} ` +
        `(cpu ${verdict(ratio.cpu, IMPORT_TARGET)})`
      : '',
    [
      ...loadedClients,
      ...lazyClients.map((client) => `${client}*`),
      ...(locales ? [`zod locales: ${locales}`] : []),
    ].join(' ') || '-',
    unexpected.length ? `not needed: ${unexpected.join(' ')}` : 'ok',
  ];
});

console.log(
  `bundles: ${bundles.length - 2} functions + baseline, built as serverless.yml's custom.esbuild builds them`,
);
console.log(
  `node ${process.version}; import: a new process per import, ${RUNS} runs each, wall and CPU ms; ` +
    `build ${buildSeconds.toFixed(1)} s, imports ${importSeconds.toFixed(0)} s\n`,
);
console.log(
  table(
    [
      'function',
      'KB',
      'size/base',
      'lazy KB',
      'min ms',
      'median',
      'max',
      'import/base',
      'cpu min',
      'median',
      'max',
      'cpu/base',
      `HTTP targets (≤${SIZE_TARGET}x, ≤${IMPORT_TARGET}x)`,
      'heavy clients',
      'client targets',
    ],
    rows,
  ),
);
console.log(
  '\nKB: the bundle and the chunks it imports statically, what a cold start loads; lazy KB: chunks loaded ' +
    'at their first import() (a client only some routes call; * marks a client carried only there).\n' +
    `Ratios to "baseline" (the bare handler built as the functions are). "${FIRST_BASELINE}": the same ` +
    'handler built as the targets were first measured (the SDK’s CommonJS builds in one file).',
);
const http = bundles.filter((bundle) => bundle.http).map(toFirstBaseline);
const range = (values: number[]) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}x`;
console.log(
  `HTTP functions against "${FIRST_BASELINE}": size ${range(http.map((ratio) => ratio.size))}, ` +
    `import ${range(http.map((ratio) => ratio.wall))}, cpu ${range(http.map((ratio) => ratio.cpu))}.`,
);
console.log(
  '\nClient targets: SES only where email is sent (a bundled module calls email.send), KMS only where credentials ' +
    'are read or written (functions given KMS_KEY_ID in serverless.yml), Stripe only where payments are taken ' +
    '(a bundled module calls payments.create…), CloudWatch Logs only in logs, S3 only in backups, ' +
    'the AI SDK only where agents run (a bundled module calls runner.run).',
);
for (const [name, message] of failures) console.log(`import failed: ${name}: ${message}`);

console.log('\nTop 5 packages per function, of what a cold start loads (KB of minified output):\n');
console.log(
  table(
    ['function', 'top packages'],
    bundles.map((bundle) => [
      bundle.name,
      topPackages(bundle.loaded)
        .map(([name, bytes]) => `${name} ${kb(bytes)}`)
        .join(', '),
    ]),
  ),
);
rmSync(work, { recursive: true, force: true });
