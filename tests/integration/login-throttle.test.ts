import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { authHandler } from '#functions/http/auth';
import { config } from '#lib/config';
import { db, TABLE } from '#lib/db/client';
import { hashPassword } from '#lib/identity/passwords';
import { userKeys } from '#lib/identity/users';
import { fixedClock } from '#lib/kernel/clock';
import { context, httpEvent } from '#tests/support/events';
import { newUser, type TestUser } from '#tests/support/identity';

/**
 * Failed logins slow a guesser down per email and address, without letting anyone lock the owner out
 * from elsewhere; and password hashes made with weaker parameters rise to the configured ones.
 */
const clock = fixedClock(new Date());
const auth = authHandler({ ports: { clock } });

async function attempt(user: TestUser, password: string, sourceIp: string) {
  const event = httpEvent('POST', '/api/auth/login', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: user.email, password }),
  });
  event.requestContext.http.sourceIp = sourceIp;
  const response = await auth(event, context());
  return { status: response.statusCode, retryAfter: Number(response.headers?.['Retry-After'] ?? 0) };
}

async function failTimes(user: TestUser, times: number, sourceIp: string) {
  for (let time = 0; time < times; time += 1) {
    expect((await attempt(user, `wrong-${time}`, sourceIp)).status).toBe(401);
  }
}

describe('login throttling', () => {
  it('lets the owner in from another address while a guesser waits', async () => {
    // Prepare
    const user = await newUser('target');
    await failTimes(user, 10, '203.0.113.10');

    // Act
    const guesser = await attempt(user, user.password, '203.0.113.10');
    const owner = await attempt(user, user.password, '198.51.100.20');

    // Assess
    expect(guesser.status).toBe(429);
    expect(owner.status).toBe(200);
  });

  it('doubles the wait with each failure past the tenth, and starts over after a success', async () => {
    // Prepare
    const user = await newUser('doubling');
    const ip = '203.0.113.11';
    await failTimes(user, 10, ip);
    const first = await attempt(user, 'still-wrong', ip);

    // Act: wait out the minute, fail once more, and see the next wait.
    clock.advance(61_000);
    const eleventh = await attempt(user, 'wrong-again', ip);
    const second = await attempt(user, 'still-wrong', ip);
    clock.advance(121_000);
    const success = await attempt(user, user.password, ip);
    const afterSuccess = await attempt(user, 'typo', ip);

    // Assess
    expect(first).toEqual({ status: 429, retryAfter: 60 });
    expect(eleventh.status).toBe(401);
    expect(second).toEqual({ status: 429, retryAfter: 120 });
    expect(success.status).toBe(200);
    expect(afterSuccess.status).toBe(401);
  });

  it('closes an email for the window after 100 failures from many addresses together', async () => {
    // Prepare: 11 addresses with 9 failures each and one more stay under every per-address limit.
    const user = await newUser('distributed');
    for (let address = 0; address < 11; address += 1) await failTimes(user, 9, `192.0.2.${address}`);
    await failTimes(user, 1, '192.0.2.100');

    // Act
    const fromNewAddress = await attempt(user, user.password, '192.0.2.200');

    // Assess
    expect(fromNewAddress.status).toBe(429);
    expect(fromNewAddress.retryAfter).toBeGreaterThan(0);
    expect(fromNewAddress.retryAfter).toBeLessThanOrEqual(900);
  });
});

describe('password hashes', () => {
  it('replaces a hash made with weaker parameters at the next successful login, keeping the password', async () => {
    // Prepare: the stored hash as an older release made it.
    const user = await newUser('rehash');
    const weak = await hashPassword(user.password, { logN: 10 });
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: userKeys.byId(user.id),
        UpdateExpression: 'SET password_hash = :hash',
        ExpressionAttributeValues: { ':hash': weak },
      }),
    );

    // Act
    const first = await attempt(user, user.password, '203.0.113.30');
    const stored = await db.send(new GetCommand({ TableName: TABLE, Key: userKeys.byId(user.id) }));
    const again = await attempt(user, user.password, '203.0.113.30');

    // Assess
    expect(first.status).toBe(200);
    expect(String(stored.Item?.password_hash).split('$')[1]).toBe(String(2 ** config.passwordScryptLogN));
    expect(stored.Item?.password_hash).not.toBe(weak);
    expect(again.status).toBe(200);
  });

  it('makes new hashes with the configured cost', async () => {
    const hash = await hashPassword('a long password');
    expect(hash.split('$').slice(0, 4)).toEqual(['scrypt', String(2 ** config.passwordScryptLogN), '8', '1']);
  });
});
