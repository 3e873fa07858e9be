import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileBlobStore } from '#lib/adapters/local/file-blobs';
import { InvalidBlobKeyError } from '#lib/kernel/blob-key';

/**
 * The local blob store against a real folder: what it writes lands under its root and nowhere else,
 * whatever key it is given, and a write that fails leaves nothing behind.
 */
async function* bytes(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

async function text(stream: AsyncIterable<Uint8Array> | undefined): Promise<string | undefined> {
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Every file and folder under `dir`, relative to it. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/** A sandbox folder holding the store's root (`backups`) and a sibling the store must never reach. */
function sandbox() {
  const dir = mkdtempSync(join(tmpdir(), 'aos-blobs-'));
  const root = join(dir, 'backups');
  mkdirSync(join(dir, 'outside'));
  writeFileSync(join(dir, 'outside', 'secret.txt'), 'keep me');
  return { dir, root, store: fileBlobStore(root) };
}

describe('fileBlobStore', () => {
  it('puts, reads, heads, lists and deletes files under its root', async () => {
    // Prepare
    const { root, store } = sandbox();
    const key = 'org_1/backup-org_1-20250301T100000000Z.json.gz';

    // Act
    const stored = await store.put(key, bytes('hello ', 'world'), { contentType: 'application/gzip' });
    await store.put('org_1/second.json.gz', bytes('2'), { contentType: 'application/gzip' });
    await store.put('org_2/theirs.json.gz', bytes('3'), { contentType: 'application/gzip' });
    const read = await text(await store.get(key));
    const head = await store.head(key);
    const listed = await store.list('org_1/', 10);
    const firstOnly = await store.list('org_1/', 1);
    await store.delete(key);
    await store.delete(key);

    // Assess
    expect(stored).toEqual({ size: 11 });
    expect(read).toBe('hello world');
    expect(head).toEqual({ key, size: 11, lastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(listed.items.map((item) => [item.key, item.size])).toEqual([
      [key, 11],
      ['org_1/second.json.gz', 1],
    ]);
    expect(listed.complete).toBe(true);
    expect(firstOnly).toEqual({ items: [expect.objectContaining({ key })], complete: false });
    expect(await store.head(key)).toBeUndefined();
    expect(await store.get(key)).toBeUndefined();
    expect(tree(root)).toEqual(['org_1', 'org_1/second.json.gz', 'org_2', 'org_2/theirs.json.gz']);
  });

  it('answers nothing for keys and folders that were never written', async () => {
    // Prepare
    const { store } = sandbox();

    // Act
    const results = [await store.get('org_9/x'), await store.head('org_9/x'), await store.list('org_9/', 5)];

    // Assess
    expect(results).toEqual([undefined, undefined, { items: [], complete: true }]);
  });

  it.each([
    '../outside/secret.txt',
    'org_1/../../outside/secret.txt',
    '..',
    '/etc/passwd',
    `${tmpdir()}/x`,
    'org_1\\..\\..\\outside\\x',
    'org_1/x\u0000.gz',
    'org_1//x',
    'org_1/./x',
    'org_1/%2e%2e%2fx',
    '',
  ])('refuses the key %j and writes, reads and deletes nothing', async (key) => {
    // Prepare
    const { dir, store } = sandbox();
    const before = tree(dir);

    // Act
    const outcomes = await Promise.allSettled([
      store.put(key, bytes('payload'), { contentType: 'application/gzip' }),
      store.get(key),
      store.head(key),
      store.delete(key),
      store.list(key, 10),
      store.list(`${key}/`, 10),
    ]);

    // Assess
    for (const outcome of outcomes) {
      expect(outcome).toEqual({ status: 'rejected', reason: expect.any(InvalidBlobKeyError) });
    }
    expect(tree(dir)).toEqual(before);
    expect(readFileSync(join(dir, 'outside', 'secret.txt'), 'utf8')).toBe('keep me');
  });

  it('refuses a folder that is a link to somewhere outside its root', async () => {
    // Prepare
    const { dir, root, store } = sandbox();
    mkdirSync(root);
    symlinkSync(join(dir, 'outside'), join(root, 'org_1'));

    // Act
    const outcomes = await Promise.allSettled([
      store.put('org_1/planted.json.gz', bytes('x'), { contentType: 'application/gzip' }),
      store.get('org_1/secret.txt'),
      store.delete('org_1/secret.txt'),
    ]);

    // Assess
    for (const outcome of outcomes) {
      expect(outcome).toEqual({ status: 'rejected', reason: expect.any(InvalidBlobKeyError) });
    }
    expect(readdirSync(join(dir, 'outside'))).toEqual(['secret.txt']);
  });

  it('leaves no file, whole or partial, when the body fails midway', async () => {
    // Prepare
    const { root, store } = sandbox();
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('half of it');
      throw new Error('export failed');
    }

    // Act
    const putting = store.put('org_1/broken.json.gz', failing(), { contentType: 'application/gzip' });

    // Assess
    await expect(putting).rejects.toThrow('export failed');
    expect(tree(root)).toEqual(['org_1']);
  });

  it('replaces a file only once the new one is complete', async () => {
    // Prepare
    const { store } = sandbox();
    const key = 'org_1/file.json.gz';
    await store.put(key, bytes('old'), { contentType: 'application/gzip' });
    let seenMidway: string | undefined;
    async function* slow(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('new ');
      seenMidway = await text(await store.get(key));
      yield Buffer.from('content');
    }

    // Act
    await store.put(key, slow(), { contentType: 'application/gzip' });

    // Assess
    expect(seenMidway).toBe('old');
    expect(await text(await store.get(key))).toBe('new content');
  });
});
