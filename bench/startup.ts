/**
 * Time from `npm start` (the same command line npm runs) to the first 200 from /api/health, on a new
 * data directory and again on one that already holds the table. Prints the figures; asserts nothing.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '#infra/local/ports';

async function timeToHealthy(dataDir: string): Promise<number> {
  const port = await freePort();
  const { DYNAMODB_ENDPOINT, TABLE_NAME, ...env } = process.env;
  const started = performance.now();
  const child = spawn('npm', ['start', '--silent'], {
    env: { ...env, PORT: String(port), DATA_DIR: dataDir, QUIET: '1' },
    stdio: process.env.BENCH_VERBOSE ? 'inherit' : 'ignore',
    // Its own process group, so that stopping it is a Ctrl-C: SIGINT to the whole group.
    detached: true,
  });
  try {
    for (;;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/api/health`);
        if (response.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 60_000) throw new Error('no 200 within 60 s');
      await new Promise((done) => setTimeout(done, 25));
    }
  } finally {
    const exited = new Promise((done) => child.once('exit', done));
    process.kill(-(child.pid as number), 'SIGINT');
    await exited;
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'aos-bench-start-'));
const cold = await timeToHealthy(dataDir);
const warm = await timeToHealthy(dataDir);
console.log(`startup: npm start → first 200 from /api/health`);
console.log(`  new data directory (creates the table): ${(cold / 1000).toFixed(2)} s`);
console.log(`  existing data directory:                ${(warm / 1000).toFixed(2)} s`);
