/** `npm run bench`: runs every benchmark in this folder, one after the other. */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const only = process.argv[2];
const benches = readdirSync('bench')
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .filter((file) => !only || file.startsWith(only));
let failed = 0;
for (const file of benches) {
  console.log(`\n== bench/${file}`);
  const run = spawnSync('node_modules/.bin/tsx', [`bench/${file}`], { stdio: 'inherit' });
  if (run.status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
