import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where each test file's worker leaves how many responses and log lines the leak scan read, and how
 * many answers the response contract checked (tests/setup/leak-scan.ts); named by this process, the
 * workers' parent, so parallel runs keep apart.
 */
export const countsDir = (runner: number): string => join(tmpdir(), `leak-scan-${runner}`);

interface Counts {
  responses: number;
  logLines: number;
  contractChecks: number;
}

/** Prints, once at the end of the run, how much the leak scan read, so a scan that read nothing shows. */
export default function setup() {
  mkdirSync(countsDir(process.pid), { recursive: true });
  return () => {
    const dir = countsDir(process.pid);
    let files: string[] = [];
    try {
      files = readdirSync(dir);
    } catch {
      return;
    }
    if (files.length === 0) return;
    const totals = files
      .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Counts)
      .reduce((sum, one) => ({
        responses: sum.responses + one.responses,
        logLines: sum.logLines + one.logLines,
        contractChecks: sum.contractChecks + (one.contractChecks ?? 0),
      }));
    rmSync(dir, { recursive: true, force: true });
    process.stdout.write(
      `leak scan: ${totals.responses} responses and ${totals.logLines} log lines in ${files.length} test files; ` +
        `response contract: ${totals.contractChecks} responses checked against the OpenAPI document\n`,
    );
  };
}
