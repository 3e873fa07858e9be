/**
 * POST /auth/login in process against DynamoDB Local: the latency a user waits for, which is mostly
 * the password hash (scrypt). Prints min, median and max of 20 logins with the configured scrypt cost,
 * and the cost of one scrypt at each N, so that a change of parameters shows its price.
 *
 * `npm run bench -- login`
 */

import { benchTable } from '#bench/support/local-table';

const dynamo = await benchTable('bench-login');

const { call, newUser } = await import('#tests/support/identity');
const { handler: auth } = await import('#functions/http/auth');

const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return { min: at(0), median: at(0.5), max: at(1) };
};
const ms = (value: number) => `${value.toFixed(0)} ms`;

const user = await newUser('bench');
const samples: number[] = [];
for (let run = 0; run < 20; run += 1) {
  const started = performance.now();
  const response = await call(auth, 'POST', '/auth/login', { body: { email: user.email, password: user.password } });
  samples.push(performance.now() - started);
  if (response.status !== 200) throw new Error(`login answered ${response.status}`);
}
const login = stats(samples);
console.log(`node ${process.version}; 20 logins of one user, in process, DynamoDB Local`);
console.log(`POST /auth/login   min ${ms(login.min)}   median ${ms(login.median)}   max ${ms(login.max)}`);

const { scryptSync, randomBytes } = await import('node:crypto');
for (const logN of [14, 15, 16, 17]) {
  const times: number[] = [];
  for (let run = 0; run < 5; run += 1) {
    const started = performance.now();
    scryptSync('a long password', randomBytes(16), 64, { N: 2 ** logN, r: 8, p: 1, maxmem: 256 * 1024 * 1024 });
    times.push(performance.now() - started);
  }
  const one = stats(times);
  console.log(`scrypt N=2^${logN} r=8 p=1   min ${ms(one.min)}   median ${ms(one.median)}   max ${ms(one.max)}`);
}
await dynamo.stop();
