import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, realpath, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertBlobFolder, assertBlobKey, InvalidBlobKeyError, isBlobKey } from '#lib/kernel/blob-key';
import type { BlobInfo, BlobStore } from '#lib/kernel/ports';

/**
 * The local blob store: one file per key under `root` (DATA_DIR/backups), the key's segments as
 * folders. A key is checked twice before any file is opened: its shape (lib/kernel/blob-key.ts), then
 * the resolved path and the real path of its folder (symbolic links followed), which must both lie
 * inside the root's. A file is written under a temporary name in its folder and renamed into place
 * once complete, so a reader never sees half a file and a failed write leaves nothing behind.
 */
const TEMP_PREFIX = '.tmp-';

const isMissing = (error: unknown): boolean => (error as NodeJS.ErrnoException)?.code === 'ENOENT';

export function fileBlobStore(root: string): BlobStore {
  const base = resolve(root);

  /** The file of a key, refused unless it lies inside the root. */
  const pathOf = (key: string): string => {
    assertBlobKey(key);
    const path = resolve(base, ...key.split('/'));
    if (!path.startsWith(base + sep)) throw new InvalidBlobKeyError(key);
    return path;
  };

  /** The folder exists and is, once links are followed, inside the root (made on demand when `create`). */
  const checkedFolder = async (path: string, key: string, create: boolean): Promise<boolean> => {
    const folder = dirname(path);
    if (create) {
      await mkdir(base, { recursive: true });
      await mkdir(folder, { recursive: true });
    }
    let realBase: string;
    let realFolder: string;
    try {
      [realBase, realFolder] = await Promise.all([realpath(base), realpath(folder)]);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    if (realFolder !== realBase && !realFolder.startsWith(realBase + sep)) throw new InvalidBlobKeyError(key);
    return true;
  };

  const info = async (key: string, path: string): Promise<BlobInfo | undefined> => {
    if (!(await checkedFolder(path, key, false))) return undefined;
    try {
      const found = await stat(path);
      return found.isFile() ? { key, size: found.size, lastModified: found.mtime.toISOString() } : undefined;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  };

  return {
    kind: 'local',

    async put(key, body) {
      const path = pathOf(key);
      await checkedFolder(path, key, true);
      const temp = join(dirname(path), `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
      let size = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          done(null, chunk);
        },
      });
      try {
        await pipeline(Readable.from(body), counter, createWriteStream(temp, { flags: 'wx' }));
        await rename(temp, path);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      return { size };
    },

    async get(key) {
      const path = pathOf(key);
      if (!(await info(key, path))) return undefined;
      return createReadStream(path);
    },

    async head(key) {
      return info(key, pathOf(key));
    },

    async list(prefix, limit) {
      assertBlobFolder(prefix);
      const folder = pathOf(prefix.slice(0, -1));
      if (!(await checkedFolder(join(folder, 'x'), prefix, false))) return { items: [], complete: true };
      let names: string[];
      try {
        names = (await readdir(folder, { withFileTypes: true }))
          .filter((entry) => entry.isFile() && !entry.name.startsWith(TEMP_PREFIX) && isBlobKey(prefix + entry.name))
          .map((entry) => entry.name)
          .sort();
      } catch (error) {
        if (isMissing(error)) return { items: [], complete: true };
        throw error;
      }
      const items: BlobInfo[] = [];
      for (const name of names.slice(0, limit)) {
        const found = await info(`${prefix}${name}`, join(folder, name));
        if (found) items.push(found);
      }
      return { items, complete: names.length <= limit };
    },

    async delete(key) {
      const path = pathOf(key);
      if (!(await checkedFolder(path, key, false))) return;
      await unlink(path).catch((error) => {
        if (!isMissing(error)) throw error;
      });
    },
  };
}
