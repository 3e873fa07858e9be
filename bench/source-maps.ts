/**
 * What a source map costs a function, to decide where the maps go (README, "Cold start"): one HTTP
 * function bundled as `npm run package` bundles it but with its map linked (as the deployed zips had it),
 * run in new processes with and without `--enable-source-maps`: the import, then the first and the
 * second time an error's stack is formatted (as the logger does for a failed request), and the bytes
 * of the map. Prints the figures; asserts nothing.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { importRuns, spread, table } from '#bench/support/fresh-process';
import { functionBuild } from '#infra/build/esbuild-options';

const RUNS = 15;
const FUNCTION = 'functions/http/tasks';

const work = mkdtempSync(join(tmpdir(), 'aos-bench-source-maps-'));
const { options, extension } = functionBuild();
const outdir = join(work, 'out');
await build({ ...options, sourcemap: 'linked', entryPoints: [`${FUNCTION}.ts`], outdir, logLevel: 'silent' });
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  );
const bytes = (filter: (file: string) => boolean) =>
  files(outdir)
    .filter(filter)
    .reduce((total, file) => total + statSync(file).size, 0);
const entry = join(outdir, `${FUNCTION.split('/').pop()}${extension}`);

// In the new process: a request whose event reads its headers from inside the bundle's middleware, where
// an error is made; then that error's stack is formatted (every frame below the getter is the bundle's),
// once and again for a second error, as the logger formats the error of a failed request.
const probe = join(work, 'probe.mjs');
writeFileSync(
  probe,
  `const ms = (since) => Number(process.hrtime.bigint() - since) / 1e6;
const cpuMs = (since) => { const used = process.cpuUsage(since); return (used.user + used.system) / 1000; };
export default async function (module) {
  const errors = [];
  const event = () => ({
    version: '2.0', rawPath: '/api/tasks', rawQueryString: '', isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path: '/api/tasks', sourceIp: '192.0.2.1' } },
    get headers() { errors.push(new Error('probe')); return { host: 'bench.example' }; },
  });
  for (let round = 0; round < 2; round++) module.handler(event(), {}).catch(() => undefined);
  for (let tick = 0; errors.length < 2 && tick < 1000; tick++) await new Promise((done) => setImmediate(done));
  if (errors.length < 2) throw new Error('the handler never read the event');
  const figures = {};
  for (const [index, error] of errors.slice(0, 2).entries()) {
    const started = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    const stack = error.stack;
    figures[index === 0 ? 'first' : 'second'] = ms(started);
    figures[index === 0 ? 'firstCpu' : 'secondCpu'] = cpuMs(cpu);
    figures.mapped = stack.includes('.ts:') ? 1 : 0;
  }
  return figures;
}
`,
);

const { samples, failures } = importRuns(
  [
    { name: 'without --enable-source-maps', file: entry },
    { name: '--enable-source-maps', file: entry, nodeOptions: '--enable-source-maps' },
  ],
  { runs: RUNS, workDir: work, probe },
);

const kb = (filter: (file: string) => boolean) => (bytes(filter) / 1024).toFixed(0);
console.log(
  `source maps: ${FUNCTION}${extension} (${kb((file) => file.endsWith(extension))} KB of code, ` +
    `${kb((file) => file.endsWith('.map'))} KB of maps, sources included), ` +
    `built as serverless.yml's custom.esbuild builds it with sourcemap: linked`,
);
console.log(`node ${process.version}; a new process per run, ${RUNS} runs each; ms as min median max\n`);
const figure = (name: string, key: string) =>
  (samples.get(name) ?? []).map((sample) => sample.probe?.[key]).filter((value) => value !== undefined) as number[];
console.log(
  table(
    ['process', 'import ms', 'import cpu', 'first stack ms', 'first stack cpu', 'second stack ms', 'frames mapped'],
    [...samples.keys()].map((name) => [
      name,
      spread((samples.get(name) ?? []).map((sample) => sample.wallMs)).join(' '),
      spread((samples.get(name) ?? []).map((sample) => sample.cpuMs)).join(' '),
      spread(figure(name, 'first'), 1).join(' '),
      spread(figure(name, 'firstCpu'), 1).join(' '),
      spread(figure(name, 'second'), 2).join(' '),
      figure(name, 'mapped').every((mapped) => mapped === 1) ? 'yes' : 'no',
    ]),
  ),
);
for (const [name, message] of failures) console.log(`failed: ${name}: ${message}`);
console.log(`\n(the build: ${resolve(outdir)}, removed)`);
rmSync(work, { recursive: true, force: true });
