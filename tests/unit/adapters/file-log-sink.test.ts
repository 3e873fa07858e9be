import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileLogSink, LOG_FILE, logFileAge } from '#lib/adapters/local/file-log-sink';

/** The local runtime's log file writer: appends, rotates by size and by day, and stays within its bound. */
const newDir = () => mkdtempSync(join(tmpdir(), 'aos-log-sink-'));

const line = (n: number) => JSON.stringify({ level: 'INFO', message: `line ${String(n).padStart(3, '0')}` });

const filesOf = (dir: string) => readdirSync(dir).sort();
const linesOf = (dir: string, name: string) => readFileSync(join(dir, name), 'utf8').trim().split('\n');

describe('fileLogSink', () => {
  it('appends each line to service.log, creating the directory', () => {
    // Prepare
    const dir = join(newDir(), 'logs');
    const sink = fileLogSink(dir);

    // Act
    sink.write(line(1));
    sink.write(line(2));

    // Assess
    expect(filesOf(dir)).toEqual([LOG_FILE]);
    expect(linesOf(dir, LOG_FILE)).toEqual([line(1), line(2)]);
  });

  it('rotates before a line would pass maxBytes, keeping `keep` rotated files and no more', () => {
    // Prepare: each line is 38 bytes with its newline, so two fit in 80 bytes and a third does not.
    const dir = newDir();
    const sink = fileLogSink(dir, { maxBytes: 80, keep: 2 });

    // Act
    for (let n = 1; n <= 9; n += 1) sink.write(line(n));

    // Assess
    expect(filesOf(dir)).toEqual(['service.log', 'service.log.1', 'service.log.2']);
    expect(linesOf(dir, 'service.log')).toEqual([line(9)]);
    expect(linesOf(dir, 'service.log.1')).toEqual([line(7), line(8)]);
    expect(linesOf(dir, 'service.log.2')).toEqual([line(5), line(6)]);
    for (const name of filesOf(dir)) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(80);
  });

  it('rotates when the day (UTC) changes', () => {
    // Prepare
    const dir = newDir();
    let now = new Date('2026-03-01T23:59:59Z');
    const sink = fileLogSink(dir, { now: () => now });
    sink.write(line(1));

    // Act
    now = new Date('2026-03-02T00:00:01Z');
    sink.write(line(2));

    // Assess
    expect(linesOf(dir, 'service.log.1')).toEqual([line(1)]);
    expect(linesOf(dir, 'service.log')).toEqual([line(2)]);
  });

  it('goes on with the file a previous run left, counting its size', () => {
    // Prepare
    const dir = newDir();
    writeFileSync(join(dir, LOG_FILE), `${line(1)}\n`);
    const sink = fileLogSink(dir, { maxBytes: 80 });

    // Act
    sink.write(line(2));
    sink.write(line(3));

    // Assess
    expect(linesOf(dir, 'service.log.1')).toEqual([line(1), line(2)]);
    expect(linesOf(dir, 'service.log')).toEqual([line(3)]);
  });

  it('does not keep a line larger than a whole file', () => {
    // Prepare
    const dir = newDir();
    const sink = fileLogSink(dir, { maxBytes: 80 });

    // Act
    sink.write(line(1));
    sink.write(JSON.stringify({ message: 'x'.repeat(80) }));

    // Assess
    expect(filesOf(dir)).toEqual([LOG_FILE]);
    expect(linesOf(dir, LOG_FILE)).toEqual([line(1)]);
  });
});

describe('logFileAge', () => {
  it.each([
    ['service.log', 0],
    ['service.log.1', 1],
    ['service.log.12', 12],
    ['service.log.0', undefined],
    ['service.log.x', undefined],
    ['other.log', undefined],
    ['service.log.1.bak', undefined],
  ])('places %s at %s', (name, age) => {
    expect(logFileAge(name)).toBe(age);
  });
});
