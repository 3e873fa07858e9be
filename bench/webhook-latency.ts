/**
 * Time from an API call (POST /tenant-config/webhooks/test) to a receiver on 127.0.0.1 getting the
 * signed request, through the local runtime's path: the tenant-config function queues the delivery, the
 * in-process queue hands an SQS event to the delivery function, which posts. DynamoDB Local; 20 runs
 * after 3 warm-ups. Prints the figures; asserts nothing.
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-webhooks');

const { call, newUser } = await import('#tests/support/identity');
const { startReceiver } = await import('#tests/support/webhook-receiver');
const { handler: tenantConfig } = await import('#functions/http/tenant-config');

// The queue's consumers, as npm start connects them from serverless.yml (without them the delivery
// waits in the queue for ever).
const { connectLocalQueues } = await import('#infra/local/queues');
connectLocalQueues();

const receiver = await startReceiver(() => 204);
const user = await newUser('bench');
const options = { token: user.token };
await call(tenantConfig, 'PATCH', '/tenant-config', {
  ...options,
  body: { webhooks: { task_completed: receiver.url } },
});

const RUNS = 20;
const WARM_UP = 3;
const toReceiver: number[] = [];
const apiCall: number[] = [];
for (let run = 0; run < WARM_UP + RUNS; run++) {
  const started = performance.now();
  const response = await call(tenantConfig, 'POST', '/tenant-config/webhooks/test', options);
  const answered = performance.now();
  if (response.status !== 202) throw new Error(`test endpoint answered ${response.status}`);
  const webhook = await receiver.next();
  if (run < WARM_UP) continue;
  apiCall.push(answered - started);
  toReceiver.push(webhook.receivedAt - started);
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};
const figures = (values: number[]) =>
  `median ${percentile(values, 50).toFixed(1)} ms, p90 ${percentile(values, 90).toFixed(1)} ms, ` +
  `min ${Math.min(...values).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;
console.log(`POST /tenant-config/webhooks/test answered (202): ${figures(apiCall)} (${RUNS} runs, in process)`);
console.log(`API call to receiver getting the signed request: ${figures(toReceiver)} (${RUNS} runs, DynamoDB Local)`);

await receiver.close();
await dynamo.stop();
process.exit(0);
