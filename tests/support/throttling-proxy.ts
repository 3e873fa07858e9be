import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of DynamoDB Local that answers chosen requests as a throttled DynamoDB table
 * does, and passes every other one through untouched: the service's real client (its retry strategy,
 * its error parsing, the 503 boundary) meets throttling the way it would in AWS, against real data.
 */

/** How a throttled request is answered; each is DynamoDB's own answer for it. */
export type Throttle =
  /** A table or index over its provisioned throughput. */
  | 'ProvisionedThroughputExceededException'
  /** The request rate too high for the account or the control plane. */
  | 'ThrottlingException'
  /** A TransactWriteItems whose items were throttled: cancelled, every reason `ThrottlingError`. */
  | 'TransactionThrottled';

export interface Rule {
  /** The operation, e.g. `GetItem`, `TransactWriteItems`. */
  operation: string;
  /** Only requests whose body contains this text (a key, say); every request of the operation when absent. */
  containing?: string;
  /** How many of them to throttle; every one when absent, until `clear()`. */
  times?: number;
  answer: Throttle;
}

export interface Seen {
  operation: string;
  /** The SDK's `amz-sdk-request` header: `attempt=2; max=3`. */
  attempt: string;
  /** performance.now() when the request had arrived. */
  at: number;
  throttled: boolean;
  body: string;
}

export interface ThrottlingProxy {
  endpoint: string;
  /** Every request that reached the proxy, in order of arrival. */
  seen: Seen[];
  /** Throttles the requests `rule` names, from now on. */
  throttle(rule: Rule): void;
  /** Forgets every rule: everything passes through again. */
  clear(): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<Throttle, string> = {
  ProvisionedThroughputExceededException: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
  ThrottlingException: 'com.amazon.coral.availability#ThrottlingException',
  TransactionThrottled: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
};

function throttledBody(answer: Throttle, body: string): string {
  if (answer !== 'TransactionThrottled') {
    return JSON.stringify({ __type: ERROR_TYPES[answer], message: 'Rate of requests exceeds the allowed throughput.' });
  }
  const items = (JSON.parse(body) as { TransactItems?: unknown[] }).TransactItems ?? [];
  const reasons = items.map(() => ({ Code: 'ThrottlingError', Message: 'Throughput exceeds the current capacity.' }));
  return JSON.stringify({
    __type: ERROR_TYPES.TransactionThrottled,
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons
      .map((reason) => reason.Code)
      .join(', ')}]`,
    CancellationReasons: reasons,
  });
}

export async function startThrottlingProxy(upstream: string): Promise<ThrottlingProxy> {
  const target = new URL(upstream);
  let rules: Rule[] = [];
  const seen: Seen[] = [];

  const pass = (request: IncomingMessage, body: Buffer, response: ServerResponse) => {
    const forwarded = httpRequest(
      {
        hostname: target.hostname,
        port: target.port,
        method: request.method,
        path: request.url,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    forwarded.end(body);
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString('utf8');
      const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      const rule = rules.find(
        (candidate) =>
          candidate.operation === operation &&
          (candidate.containing === undefined || text.includes(candidate.containing)) &&
          (candidate.times === undefined || candidate.times > 0),
      );
      seen.push({
        operation,
        attempt: String(request.headers['amz-sdk-request'] ?? ''),
        at: performance.now(),
        throttled: rule !== undefined,
        body: text,
      });
      if (!rule) return pass(request, body, response);
      if (rule.times !== undefined) rule.times -= 1;
      response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'throttled' });
      response.end(throttledBody(rule.answer, text));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    seen,
    throttle: (rule) => {
      rules.push({ ...rule });
    },
    clear: () => {
      rules = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
