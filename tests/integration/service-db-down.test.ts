import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/ports';
import type { GroupHandler } from '#lib/http/group-handler';
import { bodyOf, context, httpEvent } from '#tests/support/events';

let service: GroupHandler;

beforeAll(async () => {
  // Prepare: point the configuration at a port where nothing listens, before the handler is loaded.
  process.env.DYNAMODB_ENDPOINT = `http://127.0.0.1:${await freePort()}`;
  process.env.HEALTH_CHECK_TIMEOUT_MS = '500';
  ({ handler: service } = await import('#functions/http/service'));
});

describe('service probes (DynamoDB unreachable)', () => {
  it('answers /health with 503 and db: error', async () => {
    const response = await service(httpEvent('GET', '/api/health'), context());
    expect(response.statusCode).toBe(503);
    expect(bodyOf(response)).toMatchObject({ data: { status: 'error', db: 'error' } });
  });

  it('answers /ready and /arch-health with 503', async () => {
    const ready = await service(httpEvent('GET', '/api/ready'), context());
    const arch = await service(httpEvent('GET', '/api/arch-health'), context());
    expect(ready.statusCode).toBe(503);
    expect(bodyOf(ready)).toEqual({ data: { ready: false, db: 'error' } });
    expect(arch.statusCode).toBe(503);
    expect(bodyOf(arch)).toMatchObject({
      data: { status: 'degraded', checks: { database: { status: 'error' } } },
    });
  });

  it('asks a client to retry later on every failing probe, as every other 503 does', async () => {
    const answers = await Promise.all(
      ['/api/health', '/api/ready', '/api/arch-health', '/api/v1/public/health'].map((path) =>
        service(httpEvent('GET', path), context()),
      ),
    );
    for (const answer of answers) {
      expect(answer.statusCode).toBe(503);
      expect(Number(answer.headers?.['Retry-After'])).toBeGreaterThan(0);
    }
  });

  it('still answers /version with 200', async () => {
    const response = await service(httpEvent('GET', '/api/version'), context());
    expect(response.statusCode).toBe(200);
  });
});

describe('data routes (DynamoDB unreachable)', () => {
  it('answers GET /tasks with 503 SERVICE_UNAVAILABLE and Retry-After, not 500', async () => {
    // Prepare
    const { handler: tasks } = await import('#functions/http/tasks');
    const event = httpEvent('GET', '/api/tasks', {
      headers: { authorization: `Bearer osk_live_${'a'.repeat(43)}` },
    });

    // Act
    const response = await tasks(event, context());

    // Assess
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe('1');
    expect(bodyOf(response)).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'The database is unavailable; try again shortly',
        details: [],
      },
    });
  });
});

describe('the queues (DynamoDB unreachable)', () => {
  it('answers POST /task-queue/submit and /claim with 503 “The queue is unavailable” and Retry-After', async () => {
    // Prepare: a caller the authenticator lets through without the table, so that the queue meets the outage.
    const { taskQueueHandler } = await import('#functions/http/task-queue');
    const taskQueue = taskQueueHandler({
      authenticator: {
        authenticate: async () => ({
          method: 'api_key',
          orgId: 'org-down',
          capability: 'write',
          isInstanceAdmin: false,
          scopes: ['write'],
          organization: { id: 'org-down', name: 'Down', slug: 'down' },
        }),
      },
    });
    const post = (path: string, body: unknown) =>
      taskQueue(
        httpEvent('POST', path, {
          headers: { authorization: 'Bearer key', 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
        context(),
      );

    // Act
    const submitted = await post('/api/task-queue/submit', { task_type: 'resize' });
    const claimed = await post('/api/task-queue/claim', { worker_id: 'w1' });

    // Assess
    for (const response of [submitted, claimed]) {
      expect(response.statusCode).toBe(503);
      expect(response.headers?.['Retry-After']).toBe('1');
      expect(bodyOf(response)).toEqual({
        error: { code: 'SERVICE_UNAVAILABLE', message: 'The queue is unavailable; try again shortly', details: [] },
      });
    }
  });
});
