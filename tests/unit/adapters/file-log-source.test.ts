import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileLogSink } from '#lib/adapters/local/file-log-sink';
import { fileLogSource } from '#lib/adapters/local/file-log-source';

/**
 * The local log source: the files the local runtime writes, read back newest first, only the asking
 * organization's lines, within a bound on the bytes one request reads.
 */
const newDir = () => mkdtempSync(join(tmpdir(), 'aos-log-source-'));

/** A line as the logger writes it, `seconds` after a fixed start. */
function logLine(seconds: number, fields: Record<string, unknown>) {
  const timestamp = new Date(Date.UTC(2026, 2, 1, 12, 0, seconds)).toISOString();
  return JSON.stringify({ level: 'INFO', message: `m${seconds}`, timestamp, service: 'agent-operations', ...fields });
}

const all = () => true;
const messages = (entries: { record: Record<string, unknown> }[]) => entries.map((entry) => entry.record.message);

describe('fileLogSource', () => {
  it('reads the current file and then the rotated ones, newest line first', async () => {
    // Prepare: six lines through the real sink, rotated every two lines.
    const dir = newDir();
    const sink = fileLogSink(dir, { maxBytes: 300, now: () => new Date('2026-03-01T12:00:00Z') });
    for (let second = 1; second <= 6; second += 1) sink.write(logLine(second, { orgId: 'org_a' }));

    // Act
    const read = await fileLogSource(dir).read({ orgId: 'org_a', keep: all, limit: 50 });

    // Assess
    expect(messages(read.entries)).toEqual(['m6', 'm5', 'm4', 'm3', 'm2', 'm1']);
    expect(read.complete).toBe(true);
    expect(read.entries[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      origin: 'service.log',
      time: Date.UTC(2026, 2, 1, 12, 0, 6),
      record: expect.objectContaining({ message: 'm6', orgId: 'org_a', level: 'INFO' }),
    });
    expect(new Set(read.entries.map((entry) => entry.origin)).size).toBeGreaterThan(1);
  });

  it('answers only the lines that name the organization, never another’s or a line of none', async () => {
    // Prepare
    const dir = newDir();
    writeFileSync(
      join(dir, 'service.log'),
      [
        logLine(1, { orgId: 'org_a' }),
        logLine(2, { org_id: 'org_b', note: 'mentions org_a in passing' }),
        logLine(3, {}),
        logLine(4, { org_id: 'org_a' }),
        logLine(5, { org_id: 'org_a', orgId: 'org_b' }),
        logLine(6, { orgId: 'org_ab' }),
        logLine(7, { orgId: ['org_a'] }),
      ].join('\n'),
    );

    // Act
    const forA = await fileLogSource(dir).read({ orgId: 'org_a', keep: all, limit: 50 });
    const forB = await fileLogSource(dir).read({ orgId: 'org_b', keep: all, limit: 50 });

    // Assess
    expect(messages(forA.entries)).toEqual(['m4', 'm1']);
    expect(messages(forB.entries)).toEqual(['m2']);
  });

  it('stops at `limit` lines, counting only the lines `keep` accepts', async () => {
    // Prepare
    const dir = newDir();
    const lines = Array.from({ length: 10 }, (_, index) =>
      logLine(index, { orgId: 'org_a', level: index % 2 ? 'ERROR' : 'INFO' }),
    );
    writeFileSync(join(dir, 'service.log'), `${lines.join('\n')}\n`);

    // Act
    const read = await fileLogSource(dir).read({
      orgId: 'org_a',
      keep: (record) => record.level === 'ERROR',
      limit: 3,
    });

    // Assess
    expect(messages(read.entries)).toEqual(['m9', 'm7', 'm5']);
    expect(read.complete).toBe(true);
  });

  it('reads no more than maxScanBytes and says the read is incomplete', async () => {
    // Prepare: 20 lines of about 120 bytes; the bound covers the last few only.
    const dir = newDir();
    const lines = Array.from({ length: 20 }, (_, index) => logLine(index, { orgId: 'org_a' }));
    writeFileSync(join(dir, 'service.log.1'), `${lines.slice(0, 10).join('\n')}\n`);
    writeFileSync(join(dir, 'service.log'), `${lines.slice(10).join('\n')}\n`);
    const lineBytes = Buffer.byteLength(`${lines[19]}\n`);

    // Act
    const read = await fileLogSource(dir, { maxScanBytes: lineBytes * 3 + 10 }).read({
      orgId: 'org_a',
      keep: all,
      limit: 50,
    });

    // Assess: three whole lines fit; the piece of the fourth is not a line.
    expect(messages(read.entries)).toEqual(['m19', 'm18', 'm17']);
    expect(read.complete).toBe(false);
  });

  it('skips lines that are not JSON objects with a timestamp, such as a line cut by a write under way', async () => {
    // Prepare
    const dir = newDir();
    writeFileSync(
      join(dir, 'service.log'),
      [
        logLine(1, { orgId: 'org_a' }),
        'plain text org_a',
        '["org_a"]',
        JSON.stringify({ message: 'no time', orgId: 'org_a' }),
        logLine(2, { orgId: 'org_a' }).slice(0, 40),
      ].join('\n'),
    );

    // Act
    const read = await fileLogSource(dir).read({ orgId: 'org_a', keep: all, limit: 50 });

    // Assess
    expect(messages(read.entries)).toEqual(['m1']);
  });

  it('answers nothing, complete, when there is no log directory yet', async () => {
    // Prepare
    const source = fileLogSource(join(newDir(), 'logs'));

    // Act
    const read = await source.read({ orgId: 'org_a', keep: all, limit: 50 });
    const files = await source.files();

    // Assess
    expect(read).toEqual({ entries: [], complete: true });
    expect(files).toEqual([]);
  });

  it('lists the log files, current first, with their sizes and last writes, and nothing else', async () => {
    // Prepare
    const dir = newDir();
    writeFileSync(join(dir, 'service.log.2'), 'aa\n');
    writeFileSync(join(dir, 'service.log'), 'abcdef\n');
    writeFileSync(join(dir, 'service.log.1'), 'abcd\n');
    writeFileSync(join(dir, 'notes.txt'), 'not a log\n');

    // Act
    const files = await fileLogSource(dir).files();

    // Assess
    expect(files).toEqual([
      { name: 'service.log', kind: 'file', size_bytes: 7, last_modified: expect.any(String) },
      { name: 'service.log.1', kind: 'file', size_bytes: 5, last_modified: expect.any(String) },
      { name: 'service.log.2', kind: 'file', size_bytes: 3, last_modified: expect.any(String) },
    ]);
    expect(Date.parse(files[0]?.last_modified ?? '')).toBeGreaterThan(Date.now() - 60_000);
  });
});
