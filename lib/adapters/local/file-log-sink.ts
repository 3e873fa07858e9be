import { appendFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The local runtime's log file: each JSON line the logger writes, appended to `DATA_DIR/logs/service.log`.
 * The file is rotated when it would pass `maxBytes` or when the day (UTC) changes: `service.log` becomes
 * `service.log.1`, `.1` becomes `.2`, and so on, the oldest beyond `keep` being overwritten. The logs
 * therefore never take more than `(keep + 1) × maxBytes` of disk. Writes are synchronous appends, so
 * lines keep their order and a crash loses nothing already logged. A single line larger than `maxBytes`
 * is not written.
 */
export const LOG_FILE = 'service.log';

/** The rotated file `n` (1 is the newest). */
export const rotatedLogFile = (n: number): string => `${LOG_FILE}.${n}`;

/** The place of a log file in time: 0 for the current file, `n` for `service.log.n`, undefined for others. */
export function logFileAge(name: string): number | undefined {
  if (name === LOG_FILE) return 0;
  const match = /^service\.log\.([1-9]\d{0,3})$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

export const DEFAULT_LOG_FILE_BYTES = 5 * 1024 * 1024;
export const DEFAULT_LOG_FILES_KEPT = 5;

export interface FileLogSinkOptions {
  maxBytes?: number;
  keep?: number;
  now?: () => Date;
}

const day = (date: Date): string => date.toISOString().slice(0, 10);

/**
 * A writer of log lines to `dir` (created when missing).
 *
 * @example
 * const sink = fileLogSink(join(dataDir, 'logs'));
 * logger.addSink((line) => sink.write(line));
 */
export function fileLogSink(dir: string, options: FileLogSinkOptions = {}): { write(line: string): void } {
  const maxBytes = options.maxBytes ?? DEFAULT_LOG_FILE_BYTES;
  const keep = Math.max(1, options.keep ?? DEFAULT_LOG_FILES_KEPT);
  const now = options.now ?? (() => new Date());
  const current = join(dir, LOG_FILE);
  mkdirSync(dir, { recursive: true });
  let size = 0;
  let writtenOn: string | undefined;
  try {
    const stat = statSync(current);
    size = stat.size;
    writtenOn = day(stat.mtime);
  } catch {
    // No file yet: the first line makes it.
  }

  const rotate = () => {
    for (let n = keep - 1; n >= 1; n -= 1) {
      try {
        renameSync(join(dir, rotatedLogFile(n)), join(dir, rotatedLogFile(n + 1)));
      } catch {
        // Fewer rotated files than `keep` so far.
      }
    }
    renameSync(current, join(dir, rotatedLogFile(1)));
    size = 0;
  };

  return {
    write(line: string) {
      const text = `${line}\n`;
      const bytes = Buffer.byteLength(text);
      // A line bigger than a whole file would break the bound; such a line is not kept.
      if (bytes > maxBytes) return;
      const today = day(now());
      if (size > 0 && (size + bytes > maxBytes || writtenOn !== today)) rotate();
      appendFileSync(current, text);
      size += bytes;
      writtenOn = today;
    },
  };
}
