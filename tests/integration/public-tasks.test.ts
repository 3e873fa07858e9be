import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as apiKeys } from '#functions/http/api-keys';
import { handler as products } from '#functions/http/products';
import { tasksHandler } from '#functions/http/tasks';
import { tenantConfigHandler } from '#functions/http/tenant-config';
import { webhookDeliveryHandler } from '#functions/queue/webhook-delivery';
import { type MemoryQueue, type MemoryQueueOptions, memoryQueue } from '#lib/adapters/local/memory-queue';
import { fixedClock } from '#lib/kernel/clock';
import type { MessageQueue } from '#lib/kernel/ports';
import { requeueUnqueued } from '#lib/webhooks/outbound/events';
import { contextWith } from '#tests/support/context';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { testQueue } from '#tests/support/queues';
import {
  as,
  createProduct,
  createPublicTask,
  createTask,
  ISO_TIME,
  idsOf,
  invalid,
  listPublicTasks,
  moveTask,
  notFound,
  patchPublicTask,
  patchTask,
  publicTaskRecord,
} from '#tests/support/tasks';
import { type Receiver, startReceiver, verifyStandardWebhook } from '#tests/support/webhook-receiver';

const tasks = tasksHandler({ ports: { queue: testQueue } });
const tenantConfig = tenantConfigHandler({ ports: { queue: testQueue } });

/**
 * The public tasks API (`/v1/public/tasks`): the same records as `/tasks` under the public field
 * names, cancel instead of delete; the `task_completed` event delivered end to end (an in-process
 * queue whose consumer is the real delivery function, posting to a real receiver on 127.0.0.1 with
 * 20 ms retries); and tenant isolation on both APIs.
 *
 * Task creation is limited to 30 a minute per organization, so each test acts in an organization of
 * its own and sends at most 30 creates.
 */

const FAST_RETRIES = [0.02, 0.02, 0.02, 0.02, 0.02];

let queue: MemoryQueue;
const receivers: Receiver[] = [];

beforeAll(async () => {
  const consumers: MemoryQueueOptions['consumers'] = {};
  queue = memoryQueue({ consumers, visibilityTimeoutSeconds: 0.05 });
  consumers['webhook-delivery'] = webhookDeliveryHandler({
    ports: { queue },
    retryDelaysSeconds: FAST_RETRIES,
  });
  testQueue.use(queue);
  // The first user of this file's table is the instance admin, who may do everything everywhere;
  // taking that place here keeps every other user an ordinary one.
  await newUser('instanceadmin');
});

afterAll(async () => {
  queue.close();
  await Promise.all(receivers.map((started) => started.close()));
});

async function receiver(): Promise<Receiver> {
  const started = await startReceiver(() => 200);
  receivers.push(started);
  return started;
}

/** A new organization whose owner registered `url` for task_completed; answers the signing secret. */
async function ownerWithWebhook(url: string): Promise<{ owner: TestUser; secret: string }> {
  const owner = await newUser('owner');
  const response = await call(tenantConfig, 'PATCH', '/tenant-config', {
    token: owner.token,
    body: { webhooks: { task_completed: url } },
  });
  if (response.status !== 200) throw new Error(`PATCH failed: ${JSON.stringify(response.body)}`);
  return { owner, secret: response.body.data.signing_secret };
}

const noBlocking = { blocked_by: [], blocks: [], is_blocked: false };

const eventBody = (webhook: { body: string }) => JSON.parse(webhook.body);

describe('one task, two APIs', () => {
  it('serves a task created on /tasks on /v1/public/tasks with the same id, adding assigned_to', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, {
      title: 'Triage the inbox',
      assignee: 'Alice',
      type: 'chore',
    });

    // Act
    const fetched = await call(tasks, 'GET', `/v1/public/tasks/${task.id}`, as(owner));
    const listed = await listPublicTasks(owner);

    // Assess
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({ data: { ...task, assigned_to: 'Alice', blocking: noBlocking } });
    expect(listed.body).toEqual({
      data: [{ ...task, assigned_to: 'Alice' }],
      meta: { total: 1, limit: 50, offset: 0 },
    });
  });

  it('serves a task created on /v1/public/tasks on /tasks, with assigned_to as its assignee', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createPublicTask(owner, { title: 'Answer the survey', assigned_to: 'bob' });

    // Act
    const fetched = await call(tasks, 'GET', `/tasks/${task.id}`, as(owner));

    // Assess
    expect(fetched.status).toBe(200);
    const { assigned_to, ...operational } = task;
    expect(assigned_to).toBe('bob');
    expect(fetched.body).toEqual({ data: { ...operational, assignee: 'bob', blocking: noBlocking } });
  });
});

describe('POST /v1/public/tasks', () => {
  it('creates a todo P2 task from a title alone', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(tasks, 'POST', '/v1/public/tasks', as(owner, { body: { title: 'Say hello' } }));

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ data: publicTaskRecord({ title: 'Say hello' }) });
  });

  it('stores every public field, naming the product by id', async () => {
    // Prepare
    const owner = await newUser('owner');
    const product = await createProduct(owner, 'Agent Desk');
    const dependency = await createPublicTask(owner, { title: 'Collect logs' });

    // Act
    const response = await call(
      tasks,
      'POST',
      '/v1/public/tasks',
      as(owner, {
        body: {
          title: 'Summarize the logs',
          description: 'Last 24 hours',
          type: 'analysis',
          priority: 'P1',
          status: 'in_progress',
          assigned_to: 'summarizer',
          product_id: product.id,
          resolution: 'A one-page summary',
          max_duration_seconds: 600,
          depends_on: [dependency.id],
        },
      }),
    );

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: publicTaskRecord({
        title: 'Summarize the logs',
        description: 'Last 24 hours',
        type: 'analysis',
        priority: 'P1',
        status: 'in_progress',
        assignee: 'summarizer',
        assigned_to: 'summarizer',
        product: 'agent-desk',
        product_id: product.id,
        resolution: 'A one-page summary',
        max_duration_seconds: 600,
        depends_on: [dependency.id],
      }),
    });
  });

  it('answers 400 for a missing title and for a product the organization does not have', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const noTitle = await call(tasks, 'POST', '/v1/public/tasks', as(owner, { body: { type: 'chore' } }));
    const noProduct = await call(
      tasks,
      'POST',
      '/v1/public/tasks',
      as(owner, { body: { title: 'Orphan', product_id: 77 } }),
    );
    const list = await listPublicTasks(owner);

    // Assess
    expect(noTitle.status).toBe(400);
    expect(noTitle.body).toEqual(invalid('body.title'));
    expect(noProduct.status).toBe(400);
    expect(noProduct.body).toEqual(invalid('body.product_id'));
    expect(list.body.meta.total).toBe(0);
  });

  it('answers 409 for a title an open task of the same product has, whichever API created it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const product = await createProduct(owner, 'Agent Desk');
    const first = await createTask(owner, { title: 'Rotate keys', product_slug: product.slug });

    // Act
    const duplicate = await call(
      tasks,
      'POST',
      '/v1/public/tasks',
      as(owner, { body: { title: 'ROTATE keys', product_id: product.id } }),
    );
    const outsideProduct = await call(tasks, 'POST', '/v1/public/tasks', as(owner, { body: { title: 'Rotate keys' } }));

    // Assess
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({
      error: {
        code: 'CONFLICT',
        message: expect.any(String),
        details: [{ path: 'body.title', message: expect.any(String), existing_id: first.id }],
      },
    });
    expect(outsideProduct.status).toBe(201);
  });
});

describe('PATCH /v1/public/tasks/{id}', () => {
  it('changes the public fields given and keeps the others', async () => {
    // Prepare
    const owner = await newUser('owner');
    const product = await createProduct(owner, 'Agent Desk');
    const task = await createPublicTask(owner, { title: 'Draft', description: 'first pass', priority: 'P3' });

    // Act
    const response = await patchPublicTask(owner, task.id, {
      title: 'Draft the release notes',
      type: 'writing',
      priority: 'P1',
      status: 'in_progress',
      assigned_to: 'writer',
      product_id: product.id,
      resolution: 'Published',
      max_duration_seconds: 900,
    });
    const fetched = await call(tasks, 'GET', `/v1/public/tasks/${task.id}`, as(owner));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: publicTaskRecord({
        id: task.id,
        title: 'Draft the release notes',
        description: 'first pass',
        type: 'writing',
        priority: 'P1',
        status: 'in_progress',
        assignee: 'writer',
        assigned_to: 'writer',
        product: 'agent-desk',
        product_id: product.id,
        resolution: 'Published',
        max_duration_seconds: 900,
        created_at: task.created_at,
      }),
    });
    expect(fetched.body).toEqual({ data: { ...response.body.data, blocking: noBlocking } });
  });

  it('clears a field given as null and takes the task out of its product with product_id null', async () => {
    // Prepare
    const owner = await newUser('owner');
    const product = await createProduct(owner, 'Agent Desk');
    const task = await createPublicTask(owner, {
      title: 'Tidy up',
      assigned_to: 'bot',
      product_id: product.id,
    });

    // Act
    const response = await patchPublicTask(owner, task.id, {
      product_id: null,
      assigned_to: null,
      description: null,
    });
    const stats = await call(products, 'GET', `/products/${product.slug}`, as(owner));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      product: null,
      product_id: null,
      assignee: null,
      assigned_to: null,
    });
    expect(stats.body.data.stats.total_tasks).toBe(0);
  });

  it('answers 404 for an unknown task, 400 for a malformed id and 409 for a refused transition', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createPublicTask(owner, { title: 'Not started' });

    // Act
    const unknown = await patchPublicTask(owner, 999, { title: 'x' });
    const malformed = await patchPublicTask(owner, 'abc', { title: 'x' });
    const refused = await patchPublicTask(owner, task.id, { status: 'done' });

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual(invalid('params.id'));
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'CONFLICT',
      details: [{ path: 'body.status', from: 'todo', allowed: ['in_progress', 'blocked', 'cancelled'] }],
    });
  });
});

describe('GET /v1/public/tasks', () => {
  it('filters by status, q, assigned_to, priority, type and product_id, newest first', async () => {
    // Prepare
    const owner = await newUser('owner');
    const product = await createProduct(owner, 'Agent Desk');
    const summary = await createPublicTask(owner, {
      title: 'Summarize incidents',
      type: 'analysis',
      priority: 'P1',
      assigned_to: 'Summarizer',
      product_id: product.id,
    });
    const deploy = await createPublicTask(owner, {
      title: 'Deploy the agent',
      type: 'ops',
      status: 'in_progress',
      priority: 'P0',
    });
    const report = await createPublicTask(owner, {
      title: 'Weekly report',
      type: 'analysis',
      assigned_to: 'summarizer',
    });
    const old = await createPublicTask(owner, {
      title: 'Old summary',
      type: 'analysis',
      status: 'archived',
      priority: 'P1',
    });

    // Act
    const open = await listPublicTasks(owner, { status: 'todo,in_progress' });
    const archived = await listPublicTasks(owner, { status: 'archived' });
    const search = await listPublicTasks(owner, { q: 'summ' });
    const assigned = await listPublicTasks(owner, { assigned_to: 'SUMMARIZER' });
    const priority = await listPublicTasks(owner, { priority: 'P1' });
    const type = await listPublicTasks(owner, { type: 'analysis' });
    const inProduct = await listPublicTasks(owner, { product_id: String(product.id) });
    const combined = await listPublicTasks(owner, {
      type: 'analysis',
      priority: 'P1',
      status: 'todo',
      q: 'incidents',
    });

    // Assess
    expect(idsOf(open)).toEqual([report.id, deploy.id, summary.id]);
    expect(idsOf(archived)).toEqual([old.id]);
    expect(idsOf(search)).toEqual([old.id, summary.id]);
    expect(idsOf(assigned)).toEqual([report.id, summary.id]);
    expect(idsOf(priority)).toEqual([old.id, summary.id]);
    expect(idsOf(type)).toEqual([old.id, report.id, summary.id]);
    expect(inProduct.body).toEqual({ data: [summary], meta: { total: 1, limit: 50, offset: 0 } });
    expect(combined.body).toEqual({ data: [summary], meta: { total: 1, limit: 50, offset: 0 } });
  });

  it('reads assigned_to=me as the caller’s username, and pages with exact meta', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await createPublicTask(owner, { title: 'One', assigned_to: owner.username });
    const second = await createPublicTask(owner, { title: 'Two', assigned_to: owner.username });
    await createPublicTask(owner, { title: 'Three', assigned_to: 'someone' });

    // Act
    const mine = await listPublicTasks(owner, { assigned_to: 'me' });
    const page = await listPublicTasks(owner, { limit: '1', offset: '2' });
    const past = await listPublicTasks(owner, { offset: '5' });

    // Assess
    expect(mine.body).toEqual({ data: [second, first], meta: { total: 2, limit: 50, offset: 0 } });
    expect(page.body).toEqual({ data: [first], meta: { total: 3, limit: 1, offset: 2 } });
    expect(past.body).toEqual({ data: [], meta: { total: 3, limit: 50, offset: 5 } });
  });

  it('answers 400 for an unknown status, a malformed product_id and q longer than 200 characters', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const status = await listPublicTasks(owner, { status: 'paused' });
    const product = await listPublicTasks(owner, { product_id: 'abc' });
    const q = await listPublicTasks(owner, { q: 'x'.repeat(201) });

    // Assess
    expect(status.status).toBe(400);
    expect(status.body).toEqual(invalid('query.status'));
    expect(product.status).toBe(400);
    expect(product.body).toEqual(invalid('query.product_id'));
    expect(q.status).toBe(400);
    expect(q.body).toEqual(invalid('query.q'));
  });
});

describe('DELETE /v1/public/tasks/{id}', () => {
  it('cancels the task and keeps it, listed under cancelled and archived', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createPublicTask(owner, { title: 'Maybe later', assigned_to: 'alice' });

    // Act
    const response = await call(tasks, 'DELETE', `/v1/public/tasks/${task.id}`, as(owner));
    const fetched = await call(tasks, 'GET', `/v1/public/tasks/${task.id}`, as(owner));
    const operational = await call(tasks, 'GET', `/tasks/${task.id}`, as(owner));
    const cancelled = await listPublicTasks(owner, { status: 'cancelled' });
    const archived = await call(tasks, 'GET', '/tasks', as(owner, { query: { status: 'archived' } }));
    const open = await listPublicTasks(owner, { status: 'todo' });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: publicTaskRecord({
        id: task.id,
        title: 'Maybe later',
        status: 'cancelled',
        assignee: 'alice',
        assigned_to: 'alice',
        created_at: task.created_at,
      }),
      meta: { deleted: false, status: 'cancelled' },
    });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({ data: { ...response.body.data, blocking: noBlocking } });
    expect(operational.body.data.status).toBe('cancelled');
    expect(cancelled.body).toEqual({ data: [response.body.data], meta: { total: 1, limit: 50, offset: 0 } });
    expect(idsOf(archived)).toEqual([task.id]);
    expect(open.body.meta.total).toBe(0);
  });

  it('cancels from any state, done included, and changes nothing for a cancelled task', async () => {
    // Prepare
    const owner = await newUser('owner');
    const done = await createPublicTask(owner, { title: 'Finished', status: 'done' });
    const inReview = await createPublicTask(owner, { title: 'In review', status: 'review' });

    // Act
    const fromDone = await call(tasks, 'DELETE', `/v1/public/tasks/${done.id}`, as(owner));
    const fromReview = await call(tasks, 'DELETE', `/v1/public/tasks/${inReview.id}`, as(owner));
    const again = await call(tasks, 'DELETE', `/v1/public/tasks/${inReview.id}`, as(owner));

    // Assess
    expect(fromDone.status).toBe(200);
    expect(fromDone.body.data.status).toBe('cancelled');
    expect(fromReview.body.data.status).toBe('cancelled');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(fromReview.body);
  });

  it('answers 404 for an unknown task and 400 for a malformed id', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const unknown = await call(tasks, 'DELETE', '/v1/public/tasks/31337', as(owner));
    const malformed = await call(tasks, 'DELETE', '/v1/public/tasks/abc', as(owner));

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual(invalid('params.id'));
  });
});

describe('the task_completed event', () => {
  it('delivers one signed request with the done task when a task moves through in_progress to done', async () => {
    // Prepare
    const hook = await receiver();
    const { owner, secret } = await ownerWithWebhook(hook.url);
    const task = await createTask(owner, { title: 'Summarize the logs', assignee: 'summarizer' });

    // Act
    await moveTask(owner, task.id, 'in_progress');
    await queue.drain();
    const afterStart = hook.received.length;
    const done = await moveTask(owner, task.id, 'done');
    await queue.drain();

    // Assess
    expect(afterStart).toBe(0);
    expect(hook.received).toHaveLength(1);
    const [webhook] = hook.received as [(typeof hook.received)[number]];
    expect(verifyStandardWebhook(secret, webhook)).toBe(true);
    expect(eventBody(webhook)).toEqual({
      type: 'task_completed',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: {
        task: expect.objectContaining({
          id: task.id,
          title: 'Summarize the logs',
          status: 'done',
          assignee: 'summarizer',
          completed_at: done.completed_at,
        }),
      },
    });
    expect(done.completed_at).toMatch(ISO_TIME);
  });

  it('sends nothing more for a done task set done again or edited, and again after a reopen', async () => {
    // Prepare
    const hook = await receiver();
    const { owner } = await ownerWithWebhook(hook.url);
    const task = await createTask(owner, { title: 'Release 1.0' });
    await moveTask(owner, task.id, 'in_progress', 'done');
    await queue.drain();

    // Act
    const doneAgain = await patchTask(owner, task.id, { status: 'done' });
    const publicDoneAgain = await patchPublicTask(owner, task.id, { status: 'done' });
    const edited = await patchTask(owner, task.id, { description: 'Shipped on time' });
    await queue.drain();
    const beforeReopen = hook.received.length;
    await moveTask(owner, task.id, 'todo', 'in_progress', 'done');
    await queue.drain();

    // Assess
    expect([doneAgain.status, publicDoneAgain.status, edited.status]).toEqual([200, 200, 200]);
    expect(beforeReopen).toBe(1);
    expect(hook.received).toHaveLength(2);
    const [first, second] = hook.received as [(typeof hook.received)[number], (typeof hook.received)[number]];
    expect(second.headers['webhook-id']).not.toBe(first.headers['webhook-id']);
    expect(eventBody(second).data.task).toMatchObject({
      id: task.id,
      status: 'done',
      description: 'Shipped on time',
    });
  });

  it('delivers one for a task created done, and one for a task completed through the public API', async () => {
    // Prepare
    const hook = await receiver();
    const { owner } = await ownerWithWebhook(hook.url);

    // Act
    const createdDone = await createTask(owner, { title: 'Already shipped', status: 'done' });
    await queue.drain();
    const afterCreate = hook.received.map((webhook) => eventBody(webhook).data.task.id);
    const viaPublic = await createPublicTask(owner, { title: 'Public work', status: 'in_progress' });
    const completed = await patchPublicTask(owner, viaPublic.id, { status: 'done' });
    await queue.drain();

    // Assess
    expect(afterCreate).toEqual([createdDone.id]);
    expect(completed.status).toBe(200);
    expect(hook.received.map((webhook) => eventBody(webhook).data.task)).toEqual([
      expect.objectContaining({ id: createdDone.id, title: 'Already shipped', status: 'done' }),
      expect.objectContaining({ id: viaPublic.id, title: 'Public work', status: 'done' }),
    ]);
  });

  it('sends nothing when a task is cancelled through the public API', async () => {
    // Prepare
    const hook = await receiver();
    const { owner } = await ownerWithWebhook(hook.url);
    const task = await createPublicTask(owner, { title: 'Never mind', status: 'in_progress' });

    // Act
    const cancelled = await call(tasks, 'DELETE', `/v1/public/tasks/${task.id}`, as(owner));
    await queue.drain();

    // Assess
    expect(cancelled.status).toBe(200);
    expect(hook.received).toHaveLength(0);
  });

  it('completes tasks of an organization without a registered URL, delivering nothing', async () => {
    // Prepare
    const hook = await receiver();
    await ownerWithWebhook(hook.url);
    const owner = await newUser('quiet');
    const task = await createTask(owner, { title: 'Quiet work' });

    // Act
    const done = await moveTask(owner, task.id, 'in_progress', 'done');
    const createdDone = await call(
      tasks,
      'POST',
      '/tasks',
      as(owner, { body: { title: 'Quiet, done', status: 'done' } }),
    );
    await queue.drain();
    const log = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', as(owner));

    // Assess
    expect(done.status).toBe('done');
    expect(createdDone.status).toBe(201);
    expect(hook.received).toHaveLength(0);
    expect(log.body.meta.total).toBe(0);
  });
});

describe('the task_completed event when its message cannot be queued at once', () => {
  /** The file's queue, except that sending fails while `refusing` is true. */
  let refusing = false;
  const flakyQueue: MessageQueue = {
    send: async (name, body, options) => {
      if (refusing) throw new Error('queue unavailable');
      await queue.send(name, body, options);
    },
  };

  beforeAll(() => testQueue.use(flakyQueue));
  afterAll(() => testQueue.use(queue));

  it('completes the task with its delivery pending, and the sweeper sends it exactly once after a minute', async () => {
    // Prepare
    const hook = await receiver();
    const { owner } = await ownerWithWebhook(hook.url);
    const task = await createTask(owner, { title: 'Ship while the queue is down', status: 'in_progress' });
    refusing = true;

    // Act
    const done = await patchTask(owner, task.id, { status: 'done' });
    refusing = false;
    await queue.drain();
    const log = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', as(owner));
    const soon = await requeueUnqueued(contextWith({ queue, clock: fixedClock(new Date(Date.now() + 30_000)) }));
    const later = await requeueUnqueued(contextWith({ queue, clock: fixedClock(new Date(Date.now() + 61_000)) }));
    await queue.drain();
    const again = await requeueUnqueued(contextWith({ queue, clock: fixedClock(new Date(Date.now() + 120_000)) }));
    await queue.drain();

    // Assess
    expect(done.status).toBe(200);
    expect(done.body.data.status).toBe('done');
    expect(log.body.data).toEqual([
      expect.objectContaining({ event_type: 'task_completed', status: 'pending', attempts: [] }),
    ]);
    expect(soon).toBe(0);
    expect(later).toBe(1);
    expect(again).toBe(0);
    expect(hook.received).toHaveLength(1);
    expect(eventBody(hook.received[0] as { body: string }).data.task).toMatchObject({
      id: task.id,
      status: 'done',
    });
  });

  it('records one delivery and sends one request when two requests complete the task at once', async () => {
    // Prepare
    const hook = await receiver();
    const { owner } = await ownerWithWebhook(hook.url);
    const task = await createTask(owner, { title: 'Close the sprint', status: 'in_progress' });

    // Act
    const answers = await Promise.all([
      patchTask(owner, task.id, { status: 'done' }),
      patchPublicTask(owner, task.id, { status: 'done' }),
      patchTask(owner, task.id, { status: 'done', resolution: 'closed' }),
    ]);
    await queue.drain();
    const log = await call(tenantConfig, 'GET', '/tenant-config/webhook-deliveries', as(owner));

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(log.body.meta.total).toBe(1);
    expect(hook.received).toHaveLength(1);
  });
});

describe('tenant isolation', () => {
  it('answers 404 to another organization for every route of a task, on both APIs, and changes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const task = await createTask(owner, { title: 'Private plans', description: 'secret roadmap' });
    // DELETE /tasks needs the admin permission, which the stranger's admin key holds in its own organization.
    const key = await call(apiKeys, 'POST', `/organizations/${stranger.orgId}/api-keys`, {
      token: stranger.token,
      body: { name: 'admin', scopes: ['admin'] },
    });
    const strangerAdminKey = key.body.data.key as string;

    // Act
    const responses = [
      await call(tasks, 'GET', `/tasks/${task.id}`, as(stranger)),
      await patchTask(stranger, task.id, { title: 'Hijacked' }),
      await call(tasks, 'DELETE', `/tasks/${task.id}`, { token: strangerAdminKey }),
      await call(tasks, 'GET', `/v1/public/tasks/${task.id}`, as(stranger)),
      await patchPublicTask(stranger, task.id, { status: 'in_progress' }),
      await call(tasks, 'DELETE', `/v1/public/tasks/${task.id}`, as(stranger)),
    ];
    const fetched = await call(tasks, 'GET', `/tasks/${task.id}`, as(owner));

    // Assess
    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual(notFound);
    }
    expect(fetched.body).toEqual({ data: { ...task, blocking: noBlocking } });
  });

  it('shows another organization none of the tasks in lists, searches or next', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    await createTask(owner, {
      title: 'Private plans',
      description: 'secret roadmap',
      assignee: 'alice',
    });
    await createPublicTask(owner, { title: 'Private budget', assigned_to: stranger.username });

    // Act
    const lists = [
      await call(tasks, 'GET', '/tasks', as(stranger)),
      await call(tasks, 'GET', '/tasks', as(stranger, { query: { q: 'private' } })),
      await call(tasks, 'GET', '/tasks', as(stranger, { query: { q: 'secret roadmap' } })),
      await call(tasks, 'GET', '/tasks', as(stranger, { query: { assignee: 'alice' } })),
      await listPublicTasks(stranger),
      await listPublicTasks(stranger, { q: 'budget' }),
      await listPublicTasks(stranger, { assigned_to: 'me' }),
    ];
    const next = await call(tasks, 'GET', '/tasks', as(stranger, { query: { next: 'true' } }));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    }
    expect(next.body).toEqual({ data: [], meta: { total: 0, limit: 1, offset: 0 } });
  });

  it('answers 400 for a dependency on, or a product of, another organization', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const product = await createProduct(owner, 'Secret Product');
    const task = await createTask(owner, { title: 'Theirs' });

    // Act
    const dependency = await call(
      tasks,
      'POST',
      '/tasks',
      as(stranger, { body: { title: 'Mine', depends_on: [task.id] } }),
    );
    const publicDependency = await call(
      tasks,
      'POST',
      '/v1/public/tasks',
      as(stranger, { body: { title: 'Also mine', depends_on: [task.id] } }),
    );
    const byId = await call(
      tasks,
      'POST',
      '/v1/public/tasks',
      as(stranger, { body: { title: 'In their product', product_id: product.id } }),
    );
    const bySlug = await call(
      tasks,
      'POST',
      '/tasks',
      as(stranger, { body: { title: 'In their product', product_slug: product.slug } }),
    );
    const blocking = await call(tasks, 'GET', `/tasks/${task.id}`, as(owner));

    // Assess
    expect(dependency.status).toBe(400);
    expect(dependency.body).toEqual(invalid('body.depends_on'));
    expect(publicDependency.status).toBe(400);
    expect(publicDependency.body).toEqual(invalid('body.depends_on'));
    expect(byId.status).toBe(400);
    expect(byId.body).toEqual(invalid('body.product_id'));
    expect(bySlug.status).toBe(400);
    expect(bySlug.body).toEqual(invalid('body.product_slug'));
    expect(blocking.body.data.blocking).toEqual(noBlocking);
  });
});
