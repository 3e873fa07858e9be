/**
 * The service as `npm start` serves it (the local gateway over serverless.yml's routes, every handler in
 * this process), for the throughput bench (bench/throughput.ts), which forks this file with the
 * environment it set up (DynamoDB Local, table, DATA_DIR, quiet logs).
 *
 * The bench sends thousands of requests a minute as a handful of organizations, so the rate limits'
 * thresholds are lifted in this process (bench/support/lifted-limits.ts); the counting write stays.
 */
import { liftRateLimits } from '#bench/support/lifted-limits';
import { countCalls, reportUsage } from '#bench/support/served';
import { dynamo } from '#lib/db/client';

liftRateLimits();

const calls = countCalls(dynamo);
const { startGateway } = await import('#infra/local/gateway');
const gateway = await startGateway({ port: 0, host: '127.0.0.1' });
reportUsage(gateway.server, calls);
