import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { vi } from 'vitest';
import { logger } from '#lib/logger';

/**
 * Captures everything written to stdout and stderr (where the JSON logger writes) at `level`, for
 * tests that check what is and is not logged. Undo with `vi.restoreAllMocks()` and
 * `logger.setLogLevel('SILENT')` in afterEach.
 */
export function captureLogs(level: LogLevel): string[] {
  logger.setLogLevel(level);
  const lines: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  return lines;
}
