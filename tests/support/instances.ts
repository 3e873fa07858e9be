import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `npm start` as a user runs it, for end-to-end tests: a real process with its own DynamoDB Local,
 * port and data directory. Runs `node --import tsx infra/local/start.ts`, which is what the npm script
 * runs: one process, so that a signal reaches the service itself, as Ctrl-C does.
 */

export interface Instance {
  child: ChildProcess;
  port: number;
  dataDir: string;
  output: () => string;
  exited: Promise<number | null>;
}

const running: Instance[] = [];

/** The environment of a new user: none of the test run's own settings. */
export function userEnv(port: number, dataDir: string): NodeJS.ProcessEnv {
  const { DYNAMODB_ENDPOINT, TABLE_NAME, VALIDATE_RESPONSES, JWT_SECRET, ...rest } = process.env;
  return { ...rest, PORT: String(port), DATA_DIR: dataDir, QUIET: '1' };
}

/**
 * `viaParent`: under a shell that stays its parent, as npm is (`npm start` runs the script in `sh -c`).
 * `env`: settings the user gives on top of their environment (`LOCAL_RUN_DELAY_MS=1500 npm start`).
 */
export function launch(
  port: number,
  dataDir: string,
  options: { viaParent?: boolean; env?: NodeJS.ProcessEnv } = {},
): Instance {
  const command = [process.execPath, '--import', 'tsx', 'infra/local/start.ts'];
  const [file, args] = options.viaParent
    ? ['sh', ['-c', `${command.map((part) => `'${part}'`).join(' ')}; exit $?`]]
    : [command[0] as string, command.slice(1)];
  const child = spawn(file, args, {
    env: { ...userEnv(port, dataDir), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const instance = { child, port, dataDir, output: () => output, exited };
  running.push(instance);
  return instance;
}

export async function waitForOutput(instance: Instance, text: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!instance.output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" in:\n${instance.output()}`);
    if (instance.child.exitCode !== null) throw new Error(`exited ${instance.child.exitCode}:\n${instance.output()}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

export const newDataDir = () => mkdtempSync(join(tmpdir(), 'aos-start-'));

/** Stops (Ctrl-C) every instance still running and waits for each to exit; for afterAll. */
export async function stopInstances(): Promise<void> {
  for (const instance of running) {
    if (instance.child.exitCode === null) instance.child.kill('SIGINT');
  }
  await Promise.all(running.map((instance) => instance.exited));
}

/** Java processes whose command line names this data directory. */
export function javaProcessesFor(dataDir: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', `^java .*${dataDir}`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * A crash: the service process killed outright (SIGKILL, no Ctrl-C handler runs), then waited for until
 * its DynamoDB Local, which its lifeline stops, is gone too, so that DATA_DIR can be started on again.
 */
export async function crash(instance: Instance, timeoutMs = 15_000): Promise<void> {
  instance.child.kill('SIGKILL');
  await instance.exited;
  const deadline = Date.now() + timeoutMs;
  while (javaProcessesFor(instance.dataDir).length > 0) {
    if (Date.now() > deadline) throw new Error(`DynamoDB Local of ${instance.dataDir} still runs after the crash`);
    await new Promise((done) => setTimeout(done, 100));
  }
}
