import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/ports';
import { checkedFetch } from '#tests/support/http-api';
import { javaProcessesFor, launch, newDataDir, stopInstances, userEnv, waitForOutput } from '#tests/support/instances';

/** `npm start` as a user runs it (tests/support/instances.ts). */

afterAll(stopInstances);

describe('npm start', () => {
  it('serves two instances side by side, refuses a taken port, and leaves no java behind on Ctrl-C', async () => {
    // Prepare
    const [portA, portB] = [await freePort(), await freePort()];
    const first = launch(portA, newDataDir());
    const second = launch(portB, newDataDir());
    await Promise.all([waitForOutput(first, 'is running'), waitForOutput(second, 'is running')]);

    // Act / Assess: both answer on their own ports, each with its own state.
    for (const instance of [first, second]) {
      const response = await checkedFetch(`http://127.0.0.1:${instance.port}/api/health`);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-trace-id')).toBeTruthy();
      expect(existsSync(join(instance.dataDir, 'dynamodb', 'shared-local-instance.db'))).toBe(true);
      expect(javaProcessesFor(instance.dataDir)).toHaveLength(1);
    }
    expect(first.output()).toContain(`http://localhost:${portA}/api/docs`);

    // A third on the first one's port explains and stops.
    const clash = launch(portA, newDataDir());
    expect(await clash.exited).toBe(1);
    expect(clash.output()).toContain(`Port ${portA} is already in use`);
    expect(javaProcessesFor(clash.dataDir)).toEqual([]);

    // Ctrl-C stops each instance with its DynamoDB Local.
    first.child.kill('SIGINT');
    second.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    expect(await second.exited).toBe(0);
    expect(javaProcessesFor(first.dataDir)).toEqual([]);
    expect(javaProcessesFor(second.dataDir)).toEqual([]);
  });

  it('keeps its state in DATA_DIR across restarts', async () => {
    const dataDir = newDataDir();
    const first = launch(await freePort(), dataDir);
    await waitForOutput(first, 'is running');
    expect(first.output()).toContain('(new table created)');
    first.child.kill('SIGINT');
    await first.exited;

    const again = launch(await freePort(), dataDir);
    await waitForOutput(again, 'is running');
    expect(again.output()).not.toContain('(new table created)');
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  it('takes DynamoDB Local down with it even when the service process is killed outright', async () => {
    const instance = launch(await freePort(), newDataDir());
    await waitForOutput(instance, 'is running');
    expect(javaProcessesFor(instance.dataDir)).toHaveLength(1);
    // The service's own pid is in runtime.json.
    const { pid } = JSON.parse(readFileSync(join(instance.dataDir, 'runtime.json'), 'utf8')) as {
      pid: number;
    };

    process.kill(pid, 'SIGKILL');
    await instance.exited;

    // The lifeline notices its stdin closing and stops java within moments.
    const deadline = Date.now() + 10_000;
    while (javaProcessesFor(instance.dataDir).length > 0 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(javaProcessesFor(instance.dataDir)).toEqual([]);
  });

  it('stops with its DynamoDB Local when the process that launched it is killed outright', async () => {
    const instance = launch(await freePort(), newDataDir(), { viaParent: true });
    await waitForOutput(instance, 'is running');
    const { pid } = JSON.parse(readFileSync(join(instance.dataDir, 'runtime.json'), 'utf8')) as {
      pid: number;
    };

    instance.child.kill('SIGKILL');

    const deadline = Date.now() + 15_000;
    while ((isAlive(pid) || javaProcessesFor(instance.dataDir).length > 0) && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 200));
    }
    expect(isAlive(pid)).toBe(false);
    expect(javaProcessesFor(instance.dataDir)).toEqual([]);
  });
});

describe('npm start on a data directory that is busy, damaged or left behind', () => {
  it('refuses a second instance on the same DATA_DIR, naming the holder, and leaves the first serving', async () => {
    // Prepare
    const dataDir = newDataDir();
    const first = launch(await freePort(), dataDir);
    await waitForOutput(first, 'is running');

    // Act
    const second = launch(await freePort(), dataDir);

    // Assess
    expect(await second.exited).toBe(1);
    expect(second.output()).toMatch(/is in use by another npm start \(pid \d+, port \d+\)/);
    expect(second.output()).toContain('PORT=');
    expect((await checkedFetch(`http://127.0.0.1:${first.port}/api/health`)).status).toBe(200);
    expect(existsSync(join(dataDir, 'runtime.json'))).toBe(true);
    expect(javaProcessesFor(dataDir)).toHaveLength(1);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
  });

  it('restarts DynamoDB Local when it dies under a running service, and serves again', async () => {
    // Prepare
    const instance = launch(await freePort(), newDataDir());
    await waitForOutput(instance, 'is running');
    const [java] = javaProcessesFor(instance.dataDir);

    // Act
    process.kill(Number(java), 'SIGKILL');
    await waitForOutput(instance, 'is back on port', 30_000);

    // Assess
    expect(instance.output()).toMatch(/DynamoDB Local (was killed|exited with code \d+); restarting it/);
    expect((await checkedFetch(`http://127.0.0.1:${instance.port}/api/health`)).status).toBe(200);
    expect(javaProcessesFor(instance.dataDir)).toHaveLength(1);
    instance.child.kill('SIGINT');
    expect(await instance.exited).toBe(0);
  });

  it.each([
    {
      damage: 'a DATA_DIR that is a file',
      prepare: (dir: string) => writeFileSync(join(dir, 'data'), 'x'),
      dataDir: (dir: string) => join(dir, 'data'),
      says: /DATA_DIR .*data is a file, not a directory/,
    },
    {
      damage: 'a master.key that is not a key',
      prepare: (dir: string) => writeFileSync(join(dir, 'master.key'), 'garbage'),
      dataDir: (dir: string) => dir,
      says: /master\.key is not a 32-byte base64 key/,
    },
    {
      damage: 'a jwt-secret of 5 characters',
      prepare: (dir: string) => writeFileSync(join(dir, 'jwt-secret'), 'short'),
      dataDir: (dir: string) => dir,
      says: /jwt-secret holds 5 characters; at least 32 are needed/,
    },
    {
      damage: 'a damaged database file',
      prepare: (dir: string) => {
        mkdirSync(join(dir, 'dynamodb'));
        writeFileSync(join(dir, 'dynamodb', 'shared-local-instance.db'), 'not a database '.repeat(400));
      },
      dataDir: (dir: string) => dir,
      says: /DynamoDB Local cannot read its database in .*shared-local-instance\.db away/,
    },
  ])('stops at once on $damage, saying which file and what to do, and changes no file', async (example) => {
    // Prepare
    const dir = newDataDir();
    example.prepare(dir);
    const before = readdirContents(dir);

    // Act
    const instance = launch(await freePort(), example.dataDir(dir));

    // Assess
    expect(await instance.exited).toBe(1);
    expect(instance.output()).toMatch(example.says);
    expect(instance.output()).not.toMatch(/\n\s+at /);
    const after = readdirContents(dir);
    expect(Object.fromEntries(Object.keys(before).map((file) => [file, after[file]]))).toEqual(before);
    expect(javaProcessesFor(example.dataDir(dir))).toEqual([]);
  });

  it('lets npm run invoke work after a crash left runtime.json behind', async () => {
    // Prepare: the runtime file of an npm start that no longer runs.
    const dataDir = newDataDir();
    writeFileSync(
      join(dataDir, 'runtime.json'),
      JSON.stringify({ pid: 2 ** 22 + 17, port: 1, dynamodb_endpoint: 'http://127.0.0.1:1' }),
    );

    // Act
    const output = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'infra/local/invoke.ts', 'service', 'events/http/get-health.json'],
      { env: userEnv(0, dataDir), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );

    // Assess
    expect(JSON.parse(output.slice(output.indexOf('{')))).toMatchObject({ statusCode: 200 });
    expect(javaProcessesFor(dataDir)).toEqual([]);
  });

  it('lets npm run invoke work on a fresh machine, before any npm start made DATA_DIR', async () => {
    // Prepare
    const dataDir = join(newDataDir(), 'not-yet');

    // Act
    const output = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'infra/local/invoke.ts', 'webhookSweeper', 'events/schedule/webhook-sweeper.json'],
      { env: userEnv(0, dataDir), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );

    // Assess
    expect(JSON.parse(output.slice(output.indexOf('{')))).toEqual({ queued: 0 });
    expect(existsSync(join(dataDir, 'dynamodb'))).toBe(true);
  });
});

/** Every file under a directory with its contents, to see that nothing was written or removed. */
function readdirContents(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else found[path] = readFileSync(path, 'utf8');
    }
  };
  walk(dir);
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
