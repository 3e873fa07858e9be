import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What `npm start` checks in DATA_DIR before it serves: that it is a directory, that no other
 * instance uses it, and that the secrets kept in it are whole. Each problem is one line that names the
 * file and what to do; nothing in DATA_DIR is overwritten or deleted without being asked.
 */

export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** Creates DATA_DIR when missing; refuses a path that is a file. */
export function ensureDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      throw new StartupError(
        `DATA_DIR ${dir} is a file, not a directory: set DATA_DIR to a directory (e.g. DATA_DIR=.data npm start).`,
      );
    }
    if (code === 'EACCES') throw new StartupError(`DATA_DIR ${dir} cannot be created here: permission denied.`);
    throw error;
  }
  if (!statSync(dir).isDirectory()) {
    throw new StartupError(`DATA_DIR ${dir} is not a directory: set DATA_DIR to a directory.`);
  }
}

interface LockHolder {
  pid: number;
  port?: number;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes DATA_DIR for this process: `DATA_DIR/instance.lock` names the holder's pid and port. The lock
 * file is made by `link`, which fails when the name exists, so two starting instances cannot both take
 * it; a lock left by a process that no longer runs (a crash, a power cut) is taken over. Returns the
 * release function, which removes the lock only while it is still ours.
 */
export function lockDataDir(dir: string, port: number): () => void {
  const lock = join(dir, 'instance.lock');
  const mine: LockHolder = { pid: process.pid, port };
  const draft = join(dir, `.instance.lock.${process.pid}.${randomBytes(4).toString('hex')}`);
  writeFileSync(draft, JSON.stringify(mine));
  try {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        linkSync(draft, lock);
        return () => {
          if (readHolder(lock)?.pid === process.pid) rmSync(lock, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = readHolder(lock);
      if (holder && isAlive(holder.pid)) {
        throw new StartupError(
          `DATA_DIR ${dir} is in use by another npm start (pid ${holder.pid}` +
            `${holder.port ? `, port ${holder.port}` : ''}). ` +
            `To run a second instance, give it its own port and data: PORT=${port + 1} DATA_DIR=${dir}-2 npm start`,
        );
      }
      // The holder is gone: its lock is stale.
      try {
        unlinkSync(lock);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    throw new StartupError(`DATA_DIR ${dir}: another instance took it while this one was starting; try again.`);
  } finally {
    rmSync(draft, { force: true });
  }
}

function readHolder(lock: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(lock, 'utf8')) as LockHolder;
    return typeof holder.pid === 'number' ? holder : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The secrets local mode keeps in DATA_DIR, checked before anything uses them: `master.key` (the
 * credential store's key: 32 bytes, base64) unless LOCAL_MASTER_KEY is set, `jwt-secret` (at least 32
 * characters) unless JWT_SECRET is set, and `stripe-webhook-secret` (not empty).
 */
export function checkLocalSecrets(dir: string, env: { jwtSecret?: string; localMasterKey?: string }): void {
  if (!env.localMasterKey) {
    const key = readIfPresent(join(dir, 'master.key'));
    if (key !== undefined && Buffer.from(key, 'base64').length !== 32) {
      throw new StartupError(
        `${join(dir, 'master.key')} is not a 32-byte base64 key: restore it from a backup ` +
          '(credentials stored under it cannot be read without it), or move it away to start with a new key ' +
          'and lose the stored credentials.',
      );
    }
  }
  if (!env.jwtSecret) {
    const secret = readIfPresent(join(dir, 'jwt-secret'));
    if (secret !== undefined && secret.length < 32) {
      throw new StartupError(
        `${join(dir, 'jwt-secret')} holds ${secret.length} characters; at least 32 are needed: ` +
          'delete it to generate a new one (everyone signs in again), or set JWT_SECRET.',
      );
    }
  }
  const webhookSecret = readIfPresent(join(dir, 'stripe-webhook-secret'));
  if (webhookSecret !== undefined && webhookSecret.length === 0) {
    throw new StartupError(
      `${join(dir, 'stripe-webhook-secret')} is empty: delete it to generate a new local payments secret.`,
    );
  }
}

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StartupError(`${file} cannot be read (${(error as NodeJS.ErrnoException).code}): check its permissions.`);
  }
}
