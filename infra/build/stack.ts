import { readFileSync } from 'node:fs';
import { mapStackTrace } from '#infra/build/stack-trace';

/**
 * `npm run stack`: reads a stack trace (or a whole JSON log line) from a file or from standard input and
 * prints it with the bundle frames mapped back to the TypeScript, using the maps `npm run package` wrote
 * for the build that was deployed.
 * Usage: `npm run stack -- [file] [--maps .serverless/sourcemaps]`, e.g. `pbpaste | npm run stack`.
 */
const args = process.argv.slice(2);
const mapsAt = args.indexOf('--maps');
const mapsDir = mapsAt >= 0 ? (args[mapsAt + 1] ?? '') : '.serverless/sourcemaps';
const file = (mapsAt >= 0 ? args.filter((_, index) => index !== mapsAt && index !== mapsAt + 1) : args)[0];
process.stdout.write(mapStackTrace(readFileSync(file ?? 0, 'utf8'), mapsDir));
