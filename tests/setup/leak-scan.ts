import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { logger } from '#lib/logger';
import { countsDir } from '#tests/setup/leak-scan.global';
import { scannedCount, secretIn } from '#tests/support/leak-scan';
import { tally } from '#tests/support/tally';

/**
 * Runs before each test file: every log line at DEBUG or above is searched for the test secrets and raw
 * API keys (not for stacks: an error line keeps its stack for the operator), and the test that wrote
 * one fails.
 */
let logLines = 0;
const leaks: string[] = [];
logger.addSink((line) => {
  logLines += 1;
  const secret = secretIn(line);
  if (secret) leaks.push(`${secret} in the log line ${line.slice(0, 300)}`);
}, 'DEBUG');

afterEach(() => {
  const written = leaks.splice(0);
  if (written.length > 0) throw new Error(`a log line leaked: ${written.join('; ')}`);
});

afterAll(() => {
  const file = join(countsDir(process.ppid), `${randomUUID()}.json`);
  try {
    writeFileSync(file, JSON.stringify({ responses: scannedCount(), logLines, contractChecks: tally.contractChecks }));
  } catch {
    // Run outside the configured projects (no global setup): nothing to count into.
  }
});
