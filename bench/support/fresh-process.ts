import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Cold starts measured the way Lambda pays them: a new `node` process per run imports a bundle (and may
 * then run a probe in it). Each run reports its wall time and the CPU time the process spent, which a
 * busy machine disturbs far less than the wall time. Runs go round-robin over the bundles, so that a busy
 * moment of the machine spreads over all of them instead of one.
 */

/** The environment of a deployed function (aws mode), enough for every bundle to import. */
export const AWS_MODE_ENV = {
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

export interface Sample {
  wallMs: number;
  cpuMs: number;
  /** What the probe, if any, measured after the import (see `probe` of `importRuns`). */
  probe?: Record<string, number>;
}

const IMPORT_SCRIPT = `const started = process.hrtime.bigint();
const cpu = process.cpuUsage();
const module = await import(process.argv[2]);
const used = process.cpuUsage(cpu);
const sample = { wallMs: Number(process.hrtime.bigint() - started) / 1e6, cpuMs: (used.user + used.system) / 1000 };
if (process.argv[3]) sample.probe = await (await import(process.argv[3])).default(module);
// Work the probe started (a request on its way to the table) must not keep the process alive.
process.stdout.write('\\n' + JSON.stringify(sample) + '\\n', () => process.exit(0));
`;

export interface ImportTarget {
  name: string;
  file: string;
  /** NODE_OPTIONS of the process, e.g. `--enable-source-maps`. */
  nodeOptions?: string;
}

/**
 * `runs` imports of each target, each in a new process. `probe`, a module whose default export receives
 * the imported module, may measure something more in the same process and answer figures by name.
 * Answers the samples by target name, and the first error of each target that failed.
 */
export function importRuns(
  targets: ImportTarget[],
  options: { runs: number; workDir: string; probe?: string; env?: Record<string, string | undefined> },
): { samples: Map<string, Sample[]>; failures: Map<string, string> } {
  const script = join(options.workDir, 'import-time.mjs');
  writeFileSync(script, IMPORT_SCRIPT);
  const samples = new Map<string, Sample[]>(targets.map((target) => [target.name, []]));
  const failures = new Map<string, string>();
  for (let run = 0; run < options.runs; run++) {
    for (const target of targets) {
      if (failures.has(target.name)) continue;
      const args = [
        script,
        pathToFileURL(target.file).href,
        ...(options.probe ? [pathToFileURL(options.probe).href] : []),
      ];
      const env = {
        ...AWS_MODE_ENV,
        ...options.env,
        ...(target.nodeOptions ? { NODE_OPTIONS: target.nodeOptions } : {}),
      };
      const child = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
      const last = child.stdout.trim().split('\n').pop() ?? '';
      try {
        if (child.status !== 0) throw new Error('exit');
        samples.get(target.name)?.push(JSON.parse(last) as Sample);
      } catch {
        failures.set(target.name, child.stderr.split('\n').find((line) => /Error|error/.test(line)) ?? last);
      }
    }
  }
  return { samples, failures };
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** `min median max` of some figures, rounded to `digits`. */
export const spread = (values: number[], digits = 0): string[] =>
  values.length === 0
    ? ['-', '-', '-']
    : [Math.min(...values), median(values), Math.max(...values)].map((value) => value.toFixed(digits));

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}
