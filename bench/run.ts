/** `npm run bench`: runs every benchmark in this folder, one after the other. */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const only = process.argv[2];
/** A bench still running after this long waits on something that never comes: stopped, and counted as failed. */
const LIMIT_MS = 20 * 60_000;
const benches = readdirSync('bench')
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .filter((file) => !only || file.startsWith(only));
let failed = 0;
for (const file of benches) {
  console.log(`\n== bench/${file}`);
  const run = spawnSync('node_modules/.bin/tsx', [`bench/${file}`], { stdio: 'inherit', timeout: LIMIT_MS });
  if (run.signal) {
    console.log(`bench/${file} stopped after ${LIMIT_MS / 60_000} minutes without finishing: it waits on something`);
  }
  if (run.status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
