import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';

/**
 * A real HTTP receiver of outbound webhooks on 127.0.0.1, and the Standard Webhooks verification a
 * receiver would run, written here from the specification (not with the service's own signing code).
 */

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the request had fully arrived. */
  receivedAt: number;
}

/** The status to answer (after whatever the function awaits). */
export type Answer = (request: ReceivedWebhook, index: number) => number | Promise<number>;

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** The next request not yet taken, waiting for it if needed. */
  next(): Promise<ReceivedWebhook>;
  close(): Promise<void>;
}

export async function startReceiver(answer: Answer = () => 204): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const untaken: ReceivedWebhook[] = [];
  const waiting: Array<(request: ReceivedWebhook) => void> = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhook = {
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: performance.now(),
      };
      const index = received.push(webhook) - 1;
      const waiter = waiting.shift();
      if (waiter) waiter(webhook);
      else untaken.push(webhook);
      void Promise.resolve(answer(webhook, index)).then((status) => {
        response.writeHead(status, { 'content-type': 'text/plain' });
        response.end('ok');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    next: () => {
      const ready = untaken.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ConnectionCounter {
  port: number;
  /** Connections opened so far, whatever was sent on them (a TLS handshake counts as much as HTTP). */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * A TCP listener on 127.0.0.1 that only counts connections: a target on loopback that an https
 * webhook must never reach, so that a test can tell whether anything tried.
 */
export async function startConnectionCounter(): Promise<ConnectionCounter> {
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Standard Webhooks verification: HMAC-SHA256 keyed with the base64-decoded part of the secret after
 * `whsec_`, over `<webhook-id>.<webhook-timestamp>.<body>`, compared with each `v1,<base64>` entry of
 * the space-separated `webhook-signature` header, and a timestamp within five minutes of now.
 */
export function verifyStandardWebhook(secret: string, webhook: ReceivedWebhook): boolean {
  const id = webhook.headers['webhook-id'];
  const timestamp = webhook.headers['webhook-timestamp'];
  const signatures = webhook.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${webhook.body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
