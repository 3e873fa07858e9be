import { type ChildProcess, fork } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * A server the throughput bench measures, each in a process of its own so that its Node CPU time
 * (process.cpuUsage) is its own and not the load generator's. The child reports its port once it
 * listens, then answers every `usage` message with its CPU time so far and the DynamoDB calls it has
 * made and the requests it has answered; the parent takes the difference around each run, once the
 * child has answered every request it received (those in flight when the load generator stopped too).
 *
 * @example
 * // in the child
 * const calls = countCalls(client);
 * reportUsage(server, calls);
 * // in the parent
 * const gateway = await startServed('bench/support/serve-gateway.ts');
 * const before = await gateway.usage();
 */

export interface Usage {
  /** Node CPU time of the serving process, user and system, in microseconds. */
  cpuMicros: number;
  /** DynamoDB calls it has made, by command. */
  calls: Record<string, number>;
  /** Requests it has answered. */
  answered: number;
  /** Requests received and not answered yet. */
  inFlight: number;
}

type ChildMessage = { kind: 'ready'; port: number } | ({ kind: 'usage' } & Usage);

/** Counts the calls a DynamoDB client sends, by command (`GetItem`), into the record it returns. */
export function countCalls(client: DynamoDBClient): Record<string, number> {
  const calls: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = (context.commandName as string).replace('Command', '');
      calls[name] = (calls[name] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'benchCountCalls' },
  );
  return calls;
}

/** In the child: tells the parent the listening server's port, and answers its usage questions. */
export function reportUsage(server: Server, calls: Record<string, number>): void {
  const send = (message: ChildMessage) => process.send?.(message);
  let answered = 0;
  let inFlight = 0;
  server.on('request', (_request, response) => {
    inFlight += 1;
    response.on('close', () => {
      inFlight -= 1;
      answered += 1;
    });
  });
  process.on('message', (message) => {
    if (message !== 'usage') return;
    const cpu = process.cpuUsage();
    send({ kind: 'usage', cpuMicros: cpu.user + cpu.system, calls: { ...calls }, answered, inFlight });
  });
  // The parent's end is this process's end too, also when the parent dies without stopping it.
  process.on('disconnect', () => process.exit(0));
  send({ kind: 'ready', port: (server.address() as AddressInfo).port });
}

export interface Served {
  port: number;
  url: string;
  usage(): Promise<Usage>;
  /** The usage once no request is in flight (asked again until then). */
  settled(): Promise<Usage>;
  stop(): Promise<void>;
}

/** In the parent: forks `file` (TypeScript, through tsx) with `args`, and waits until it listens. */
export async function startServed(file: string, args: string[] = []): Promise<Served> {
  const child: ChildProcess = fork(file, args, { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const waiting: Array<(usage: Usage) => void> = [];
  const port = await new Promise<number>((done, fail) => {
    child.once('exit', (code) => fail(new Error(`${file} ${args.join(' ')} exited with ${code} before listening`)));
    child.on('message', (message: ChildMessage) => {
      if (message.kind === 'ready') done(message.port);
      else waiting.shift()?.(message);
    });
  });
  child.removeAllListeners('exit');
  const usage = () =>
    new Promise<Usage>((done) => {
      waiting.push(done);
      child.send('usage');
    });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    usage,
    async settled() {
      for (;;) {
        const now = await usage();
        if (now.inFlight === 0) return now;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.disconnect();
      }),
  };
}

/** The calls made between two usage readings, in all. */
export const callsBetween = (before: Usage, after: Usage): number =>
  Object.entries(after.calls).reduce((sum, [name, n]) => sum + n - (before.calls[name] ?? 0), 0);
