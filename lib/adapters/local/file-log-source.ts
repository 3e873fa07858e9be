import { createHash } from 'node:crypto';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { logFileAge } from '#lib/adapters/local/file-log-sink';
import type { LogSource, ServiceLogEntry, ServiceLogFile } from '#lib/kernel/ports';
import { belongsTo } from '#lib/kernel/service-log';

/** What one request reads at most, over every file: the newest lines are at the files' ends. */
export const DEFAULT_MAX_SCAN_BYTES = 8 * 1024 * 1024;

export interface FileLogSourceOptions {
  maxScanBytes?: number;
}

/**
 * The local log source: the files the local runtime writes under DATA_DIR/logs (lib/adapters/local/
 * file-log-sink.ts), read from the end of the current file backwards through the rotated ones, newest
 * line first. A request reads at most `maxScanBytes` in all; `complete` is false when that bound left
 * older lines unread. Lines that are not JSON objects with a `timestamp` (a line cut by a write under
 * way) are skipped, as are lines of any other organization or of none.
 *
 * @example
 * const { entries } = await fileLogSource(join(dataDir, 'logs')).read({ orgId, keep: () => true, limit: 50 });
 */
export function fileLogSource(dir: string, options: FileLogSourceOptions = {}): LogSource {
  const maxScanBytes = options.maxScanBytes ?? DEFAULT_MAX_SCAN_BYTES;
  return {
    kind: 'file',
    async files() {
      const files = await logFiles(dir);
      return files.map(
        (file): ServiceLogFile => ({
          name: file.name,
          kind: 'file',
          size_bytes: file.size,
          last_modified: file.modified.toISOString(),
        }),
      );
    },
    async read({ orgId, keep, limit }) {
      const entries: ServiceLogEntry[] = [];
      let budget = maxScanBytes;
      for (const file of await logFiles(dir)) {
        if (budget <= 0) return { entries, complete: false };
        const tail = await readTail(join(dir, file.name), budget);
        budget -= tail.bytes;
        const lines = tail.text.split('\n');
        // A tail that starts inside the file starts inside a line: that first piece is not a line.
        const first = tail.cut ? 1 : 0;
        for (let index = lines.length - 1; index >= first; index -= 1) {
          const entry = entryOf(lines[index] as string, file.name, orgId);
          if (!entry || !keep(entry.record)) continue;
          entries.push(entry);
          if (entries.length >= limit) return { entries, complete: true };
        }
        if (tail.cut) return { entries, complete: false };
      }
      return { entries, complete: true };
    },
  };
}

interface LogFileInfo {
  name: string;
  age: number;
  size: number;
  modified: Date;
}

/** The log files in `dir`, the current one first, then the rotated ones from the newest. */
async function logFiles(dir: string): Promise<LogFileInfo[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  const files = await Promise.all(
    names.map(async (name) => {
      const age = logFileAge(name);
      if (age === undefined) return undefined;
      const info = await stat(join(dir, name)).catch(() => undefined);
      return info?.isFile() ? { name, age, size: info.size, modified: info.mtime } : undefined;
    }),
  );
  return files.filter((file): file is LogFileInfo => file !== undefined).sort((a, b) => a.age - b.age);
}

/** The last `maxBytes` of a file; `cut` when the file holds more before them. */
async function readTail(path: string, maxBytes: number): Promise<{ text: string; bytes: number; cut: boolean }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return { text: buffer.toString('utf8'), bytes: length, cut: length < size };
  } finally {
    await handle.close();
  }
}

function entryOf(line: string, origin: string, orgId: string): ServiceLogEntry | undefined {
  const text = line.trim();
  // Most lines are another organization's or no organization's: skip those before parsing them.
  if (!text.startsWith('{') || !text.includes(orgId)) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return undefined;
  const fields = record as Record<string, unknown>;
  const time = typeof fields.timestamp === 'string' ? Date.parse(fields.timestamp) : Number.NaN;
  if (Number.isNaN(time) || !belongsTo(fields, orgId)) return undefined;
  return { id: createHash('sha256').update(text).digest('hex').slice(0, 24), origin, time, record: fields };
}
