import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freePort } from '#infra/local/ports';

/**
 * Runs AWS's DynamoDB Local, whose jar ships inside the npm package amplify-dynamodb-simulator, with
 * the machine's `java`. In memory for tests; on disk under a data directory for `npm start`.
 */

export class JavaMissingError extends Error {
  constructor() {
    super(
      'DynamoDB Local needs Java 17 or newer, and `java` was not found on the PATH.\n' +
        'Install it with:  apt-get install -y default-jre-headless',
    );
    this.name = 'JavaMissingError';
  }
}

export interface DynamoLocal {
  endpoint: string;
  port: number;
  /** Settles when the process ends, by a stop or otherwise (killed, crashed), with what it printed last. */
  exited: Promise<{ code: number | null; signal: string | null; output: string }>;
  pid: number;
  stop(): Promise<void>;
}

export interface DynamoLocalOptions {
  /** Directory for the database file; in memory when absent. */
  dataDir?: string;
  port?: number;
  /** Milliseconds to wait for the first answer. */
  startTimeoutMs?: number;
}

function emulatorDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
}

export function assertJava(): void {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) throw new JavaMissingError();
}

export async function startDynamoLocal(options: DynamoLocalOptions = {}): Promise<DynamoLocal> {
  assertJava();
  const dir = emulatorDir();
  const port = options.port ?? (await freePort());
  const storage = options.dataDir
    ? ['-sharedDb', '-dbPath', ensureDir(resolve(options.dataDir))]
    : ['-sharedDb', '-inMemory'];
  // DynamoDB Local writes files of its own (dynamodb-local-metadata.json) into its working directory:
  // the data directory, or a scratch one for an in-memory database, never the caller's.
  const workDir = options.dataDir ? resolve(options.dataDir) : mkdtempSync(join(tmpdir(), 'aos-dynamodb-'));
  // The lifeline: java runs under a shell that kills it as soon as our end of its stdin closes, which
  // happens on a clean stop and also when this process dies without one (SIGKILL, crash). No orphans.
  // (A background job's stdin is /dev/null, so the watcher reads a copy of it kept on fd 3.)
  const lifeline = 'exec 3<&0; java "$@" & child=$!; (read -r _ <&3; kill "$child" 2>/dev/null) & wait "$child"';
  const child = spawn(
    'sh',
    [
      '-c',
      lifeline,
      'dynamodb-local',
      '-Xms64m',
      '-Xmx512m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      '-port',
      String(port),
      ...storage,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'], cwd: workDir },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    if (output.length < 16_384) output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<{ code: number | null; signal: string | null; output: string }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal, output: output.slice(-2_000) })),
  );
  await waitUntilAnswering(endpoint, child, options.startTimeoutMs ?? 30_000, () => output);
  return {
    endpoint,
    port,
    exited,
    pid: child.pid as number,
    stop: async () => {
      await stopProcess(child);
      if (!options.dataDir) rmSync(workDir, { recursive: true, force: true });
    },
  };
}

function ensureDir(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}

async function waitUntilAnswering(
  endpoint: string,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`DynamoDB Local exited with code ${child.exitCode}:\n${output()}`);
    }
    try {
      // Any HTTP answer (DynamoDB Local answers 400 to a bare request) means it is listening.
      await fetch(endpoint, { signal: AbortSignal.timeout(500) });
      return;
    } catch {
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  child.stdin?.end();
  throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms:\n${output()}`);
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    // Java died on its own (killed, crashed): the watcher still waits on the lifeline; let it go too.
    child.stdin?.end();
    return Promise.resolve();
  }
  return new Promise((done) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.stdin?.end();
  });
}
