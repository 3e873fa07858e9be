import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { handler as docs } from '#functions/http/docs';
import { serviceHandler } from '#functions/http/service';
import { TASK_CREATION_PER_MINUTE } from '#lib/billing/catalogue';
import { db, TABLE } from '#lib/db/client';
import { groupHandler, route } from '#lib/http/group-handler';
import { defineRoute } from '#lib/http/route';
import { identityKeys } from '#lib/identity/keys';
import { fixedClock } from '#lib/kernel/clock';
import { rateKey } from '#lib/rate-limit/limiter';
import { contractCovers } from '#tests/support/contract';
import { context, httpEvent } from '#tests/support/events';
import { call, newUser } from '#tests/support/identity';

const group = 'limits';
const tags = ['Test'];
const whoami = defineRoute({ group, tags, method: 'GET', path: '/whoami', auth: 'bearer', summary: 'who' });
const open = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/open',
  auth: 'none',
  summary: 'open',
  body: z.object({ n: z.number() }),
});

const createTask = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/tasks-like',
  auth: 'bearer',
  summary: 'a route with its own limit, as task creation has',
  rateLimit: { name: 'task_create', perMinute: TASK_CREATION_PER_MINUTE },
});

/** The start of the next minute (tokens issued now are valid for an hour from now). */
const nextMinute = (minutesLater = 1) => new Date((Math.floor(Date.now() / 60_000) + minutesLater) * 60_000);

contractCovers(whoami, open, createTask);

/** A handler with real per-tier limits (the suite's configuration lifts them) and a clock at hh:mm:00. */
function limitedHandler(start = nextMinute()) {
  const clock = fixedClock(start);
  const handler = groupHandler(
    group,
    [
      route(whoami, async ({ principal }) => ({ org: principal?.orgId })),
      route(open, async () => ({ ok: true })),
      route(createTask, async () => ({ created: true })),
    ],
    { ports: { clock }, rateLimits: { overrideTier: null, anonymousTier: 'free' } },
  );
  return { handler, clock };
}

async function setTier(orgId: string, tier: string) {
  await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: identityKeys.organization(orgId),
      UpdateExpression: 'SET tier = :tier',
      ExpressionAttributeValues: { ':tier': tier },
    }),
  );
}

describe('rate limits', () => {
  it('counts down the headers and answers the 101st request in a minute on the free tier with 429', async () => {
    // Prepare
    const user = await newUser('freebie');
    await setTier(user.orgId, 'free');
    const start = nextMinute();
    const { handler } = limitedHandler(start);

    // Act
    const remaining: string[] = [];
    for (let i = 0; i < 100; i++) {
      const response = await call(handler, 'GET', '/whoami', { token: user.token });
      expect(response.status).toBe(200);
      remaining.push(response.headers['X-RateLimit-Remaining'] as string);
    }
    const refused = await call(handler, 'GET', '/whoami', { token: user.token });

    // Assess
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => String(99 - i)));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(refused.headers).toMatchObject({
      'Retry-After': '60',
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(start.getTime() / 1000 + 60),
    });
  });

  it('opens again in the next minute', async () => {
    const user = await newUser('patient');
    await setTier(user.orgId, 'free');
    const { handler, clock } = limitedHandler(nextMinute(2));
    for (let i = 0; i < 101; i++) await call(handler, 'GET', '/whoami', { token: user.token });

    clock.advance(60_000);
    const next = await call(handler, 'GET', '/whoami', { token: user.token });

    expect(next.status).toBe(200);
    expect(next.headers['X-RateLimit-Remaining']).toBe('99');
  });

  it('applies the hour window too, with Retry-After until the hour ends', async () => {
    // Prepare: this hour already holds 1,000 requests of the organization.
    const user = await newUser('hourly');
    await setTier(user.orgId, 'free');
    const hourStart = Math.floor(Date.now() / 3_600_000) * 3600;
    const start = new Date((hourStart + 40 * 60) * 1000);
    await db.send(
      new PutCommand({
        TableName: TABLE,
        Item: { ...rateKey(`org#${user.orgId}`, hourStart), hour_count: 1000, expires_at: hourStart + 7200 },
      }),
    );
    const { handler } = limitedHandler(start);

    // Act
    const refused = await call(handler, 'GET', '/whoami', { token: user.token });

    // Assess
    expect(refused.status).toBe(429);
    expect(refused.headers['Retry-After']).toBe(String(20 * 60));
    expect(refused.headers['X-RateLimit-Limit']).toBe('1000');
  });

  it('gives each tier its own limits', async () => {
    const user = await newUser('bigco');
    await setTier(user.orgId, 'teams');
    const { handler } = limitedHandler();

    const response = await call(handler, 'GET', '/whoami', { token: user.token });

    expect(response.headers['X-RateLimit-Limit']).toBe('2000');
  });

  it('limits anonymous callers per source IP, counting refused requests too', async () => {
    const { handler } = limitedHandler(nextMinute(3));

    // Malformed requests are refused (400) but still count and still carry the headers.
    const refusedAnyway = await call(handler, 'POST', '/open', { body: { n: 'x' } });
    for (let i = 1; i < 100; i++) await call(handler, 'POST', '/open', { body: { n: i } });
    const over = await call(handler, 'POST', '/open', { body: { n: 0 } });

    expect(refusedAnyway.status).toBe(400);
    expect(refusedAnyway.headers['X-RateLimit-Remaining']).toBe('99');
    expect(over.status).toBe(429);
  });

  it('gives a route its own per-minute limit on top of the tier’s, as task creation has', async () => {
    // Prepare: an enterprise organization, far from its tier's limits.
    const user = await newUser('creator');
    await setTier(user.orgId, 'enterprise');
    const { handler } = limitedHandler(nextMinute(4));

    // Act
    const statuses: number[] = [];
    for (let i = 0; i < TASK_CREATION_PER_MINUTE + 1; i++) {
      statuses.push((await call(handler, 'POST', '/tasks-like', { token: user.token })).status);
    }
    const otherRoute = await call(handler, 'GET', '/whoami', { token: user.token });

    // Assess
    expect(statuses.slice(0, TASK_CREATION_PER_MINUTE)).toEqual(Array(TASK_CREATION_PER_MINUTE).fill(200));
    expect(statuses.at(-1)).toBe(429);
    expect(otherRoute.status).toBe(200);
  });
});

describe('probes and documentation', () => {
  it('never answers 429 to a monitor polling health, readiness and the docs from one address', async () => {
    // Prepare: the free tier's 100 a minute per address, as anonymous callers really get.
    const service = serviceHandler({ rateLimits: { overrideTier: null, anonymousTier: 'free' } });
    const paths = ['/api/health', '/api/ready', '/api/v1/public/health'];
    const sourceIp = '198.51.100.77';

    // Act: 120 probes and 10 documentation requests, well past the anonymous limit.
    const from = (path: string) => {
      const event = httpEvent('GET', path);
      event.requestContext.http.sourceIp = sourceIp;
      return event;
    };
    const statuses: number[] = [];
    for (let round = 0; round < 40; round += 1) {
      for (const path of paths) statuses.push((await service(from(path), context())).statusCode ?? 0);
    }
    for (let round = 0; round < 10; round += 1) {
      statuses.push((await docs(from('/api/docs/openapi.json'), context())).statusCode ?? 0);
    }

    // Assess
    expect(statuses.filter((status) => status === 429)).toEqual([]);
    expect(new Set(statuses)).toEqual(new Set([200]));
  });
});
