import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoLocal } from '#infra/local/dynamodb-local';
import { ensureTable } from '#infra/local/table';

/**
 * Faults of a DynamoDB Local a test started for itself (never the run's shared one): its Java process
 * killed outright, or frozen and thawed, as a crashed or partitioned database would behave.
 */

/** The Java process of a DynamoDB Local (its `pid` is the shell that watches it). */
export function javaOf(dynamo: DynamoLocal): number {
  const found = execFileSync('pgrep', ['-P', String(dynamo.pid), '-x', 'java'], { encoding: 'utf8' }).trim();
  const pid = Number(found.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no java process under ${dynamo.pid}`);
  return pid;
}

/**
 * Kills the database (SIGKILL: without warning; SIGTERM: the JVM exits at once, dropping every connection)
 * and resolves once it is gone, its watcher with it.
 */
export async function crash(dynamo: DynamoLocal, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
  process.kill(javaOf(dynamo), signal);
  await dynamo.exited;
  await dynamo.stop();
}

/**
 * Stops the database answering while its port stays open (SIGSTOP): connections are accepted by the
 * kernel and requests wait unanswered, as behind a network partition. The returned function thaws it.
 */
export function freeze(dynamo: DynamoLocal): () => void {
  const pid = javaOf(dynamo);
  const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  if (command[command.indexOf('-port') + 1] !== String(dynamo.port)) {
    throw new Error(`java ${pid} does not serve port ${dynamo.port}: ${command.join(' ')}`);
  }
  process.kill(pid, 'SIGSTOP');
  // SIGSTOP is asynchronous: the test may send nothing until every thread of the JVM has stopped.
  const deadline = Date.now() + 5_000;
  while (stateOf(pid) !== 'T') {
    if (Date.now() > deadline) throw new Error(`java ${pid} did not stop: state ${stateOf(pid)}`);
  }
  return () => process.kill(pid, 'SIGCONT');
}

/** A process's state letter from /proc (`T` once stopped). */
const stateOf = (pid: number): string => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] ?? '';

/** Creates the test's table in `endpoint` (the setup file made it in the shared DynamoDB Local). */
export async function createTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(client, tableName);
  client.destroy();
}
