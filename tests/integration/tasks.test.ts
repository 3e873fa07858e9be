import { beforeAll, describe, expect, it } from 'vitest';
import { handler as apiKeys } from '#functions/http/api-keys';
import { handler as products } from '#functions/http/products';
import { handler as tasks, tasksHandler } from '#functions/http/tasks';
import { fixedClock } from '#lib/kernel/clock';
import { type CallResult, call, joinOrganization, newUser, type TestUser } from '#tests/support/identity';
import {
  as,
  createProduct,
  createTask,
  ISO_TIME,
  idsOf,
  invalid,
  listTasks,
  moveTask,
  notFound,
  patchTask,
  type TaskRecord,
  type TaskStatus,
  taskRecord,
} from '#tests/support/tasks';

/**
 * The operational tasks API (`/tasks`) against DynamoDB Local: records and defaults, duplicates,
 * status transitions, dependencies and blocking, lists with their filters, full-text search, `next`,
 * permanent deletion, product stats and the task creation limit.
 *
 * Task creation is limited to 30 a minute per organization (every POST counts, refused ones too), so
 * each test acts in an organization of its own and sends at most 30 creates.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin, who may do everything everywhere;
  // taking that place here keeps every other user an ordinary one.
  await newUser('instanceadmin');
});

const getTask = (user: TestUser, id: number | string) => call(tasks, 'GET', `/tasks/${id}`, as(user));

const adminKeys = new Map<string, string>();

/**
 * An admin-scoped API key of the user's organization, made once per organization. DELETE /tasks needs
 * the admin permission; a key with the admin scope holds it whatever the user's own roles are.
 */
async function adminKey(user: TestUser): Promise<string> {
  const known = adminKeys.get(user.orgId);
  if (known) return known;
  const response = await call(apiKeys, 'POST', `/organizations/${user.orgId}/api-keys`, {
    token: user.token,
    body: { name: 'admin', scopes: ['admin'] },
  });
  if (response.status !== 201) throw new Error(`create key failed: ${JSON.stringify(response.body)}`);
  adminKeys.set(user.orgId, response.body.data.key);
  return response.body.data.key as string;
}

/** DELETE /tasks/{id} with the organization's admin key. */
const deleteTask = async (user: TestUser, id: number | string) =>
  call(tasks, 'DELETE', `/tasks/${id}`, { token: await adminKey(user) });

const ref = (task: TaskRecord, status: TaskStatus = task.status) => ({
  id: task.id,
  title: task.title,
  status,
});

describe('POST /tasks', () => {
  it('creates a todo P2 task with nulls for every field not given', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(tasks, 'POST', '/tasks', as(owner, { body: { title: '  Draft the roadmap  ' } }));
    const fetched = await getTask(owner, response.body.data.id);

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ data: taskRecord({ title: 'Draft the roadmap' }) });
    expect(response.body.data.created_at).toBe(response.body.data.updated_at);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({
      data: { ...response.body.data, blocking: { blocked_by: [], blocks: [], is_blocked: false } },
    });
    expect(JSON.stringify(response.body)).not.toMatch(/"pk"|"sk"|"gsi1pk"|"version"/);
  });

  it('stores every field given, with the product as its slug and its id', async () => {
    // Prepare
    const owner = await newUser('owner');
    const product = await createProduct(owner, 'Launch Pad');
    const dependency = await createTask(owner, { title: 'Pick a date' });

    // Act
    const response = await call(
      tasks,
      'POST',
      '/tasks',
      as(owner, {
        body: {
          title: 'Write the launch post',
          description: 'Two pages, with screenshots',
          status: 'in_progress',
          priority: 'P1',
          assignee: 'Alice',
          product_slug: product.slug,
          category: 'marketing',
          tags: 'launch,blog',
          type: 'writing',
          estimated_minutes: 90,
          due_date: '2026-12-31',
          resolution: 'Publish on the blog',
          max_duration_seconds: 3600,
          depends_on: [dependency.id],
        },
      }),
    );

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: taskRecord({
        title: 'Write the launch post',
        description: 'Two pages, with screenshots',
        status: 'in_progress',
        priority: 'P1',
        assignee: 'Alice',
        product: 'launch-pad',
        product_id: product.id,
        category: 'marketing',
        tags: 'launch,blog',
        type: 'writing',
        estimated_minutes: 90,
        due_date: '2026-12-31',
        resolution: 'Publish on the blog',
        max_duration_seconds: 3600,
        depends_on: [dependency.id],
      }),
    });
  });

  it('stores archived as cancelled, and a task created done with its completion time', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const archived = await call(
      tasks,
      'POST',
      '/tasks',
      as(owner, { body: { title: 'Old idea', status: 'archived' } }),
    );
    const done = await call(tasks, 'POST', '/tasks', as(owner, { body: { title: 'Done already', status: 'done' } }));

    // Assess
    expect(archived.status).toBe(201);
    expect(archived.body.data).toEqual(taskRecord({ title: 'Old idea', status: 'cancelled' }));
    expect(done.status).toBe(201);
    expect(done.body.data).toEqual(
      taskRecord({ title: 'Done already', status: 'done', completed_at: expect.stringMatching(ISO_TIME) }),
    );
  });

  it('answers 400 naming the field for a missing or blank title and for values out of their sets', async () => {
    // Prepare
    const owner = await newUser('owner');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ description: 'no title' }, 'body.title'],
      [{ title: '   ' }, 'body.title'],
      [{ title: 'Bad priority', priority: 'P9' }, 'body.priority'],
      [{ title: 'Bad status', status: 'finished' }, 'body.status'],
      [{ title: 'Bad date', due_date: 'tomorrow' }, 'body.due_date'],
      [{ title: 'Bad estimate', estimated_minutes: -5 }, 'body.estimated_minutes'],
    ];

    // Act
    const responses = [];
    for (const [body] of cases) responses.push(await call(tasks, 'POST', '/tasks', as(owner, { body })));
    const list = await listTasks(owner);

    // Assess
    responses.forEach((response, index) => {
      const path = cases[index]?.[1] as string;
      expect(response.status, path).toBe(400);
      expect(response.body).toEqual({
        error: {
          code: 'VALIDATION_ERROR',
          message: expect.any(String),
          details: expect.arrayContaining([{ path, message: expect.any(String) }]),
        },
      });
      for (const detail of response.body.error.details) expect(detail.path).toBe(path);
    });
    expect(list.body.meta.total).toBe(0);
  });

  it('answers 400 naming body.product_slug for a product the organization does not have', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(
      tasks,
      'POST',
      '/tasks',
      as(owner, { body: { title: 'Orphan', product_slug: 'no-such-product' } }),
    );
    const list = await listTasks(owner);

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('body.product_slug'));
    expect(list.body.meta.total).toBe(0);
  });
});

describe('duplicate titles', () => {
  it('answers 409 naming the open task that has the title, ignoring case and surrounding space', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await createTask(owner, { title: 'Ship the release' });

    // Act
    const response = await call(tasks, 'POST', '/tasks', as(owner, { body: { title: '  SHIP the Release ' } }));
    const list = await listTasks(owner);

    // Assess
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: {
        code: 'CONFLICT',
        message: expect.any(String),
        details: [{ path: 'body.title', message: expect.any(String), existing_id: first.id }],
      },
    });
    expect(idsOf(list)).toEqual([first.id]);
  });

  it('allows the same title in another product, and in a product when a task without one has it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const alpha = await createProduct(owner, 'Alpha');
    const beta = await createProduct(owner, 'Beta');
    await createTask(owner, { title: 'Write tests' });

    // Act
    const inAlpha = await call(
      tasks,
      'POST',
      '/tasks',
      as(owner, { body: { title: 'Write tests', product_slug: alpha.slug } }),
    );
    const inBeta = await call(
      tasks,
      'POST',
      '/tasks',
      as(owner, { body: { title: 'write TESTS', product_slug: beta.slug } }),
    );
    const againInAlpha = await call(
      tasks,
      'POST',
      '/tasks',
      as(owner, { body: { title: 'Write Tests', product_slug: alpha.slug } }),
    );

    // Assess
    expect(inAlpha.status).toBe(201);
    expect(inAlpha.body.data).toMatchObject({ product: 'alpha', product_id: alpha.id });
    expect(inBeta.status).toBe(201);
    expect(againInAlpha.status).toBe(409);
    expect(againInAlpha.body.error.details).toEqual([
      { path: 'body.title', message: expect.any(String), existing_id: inAlpha.body.data.id },
    ]);
  });

  it('allows the title again once the task that had it is done or cancelled', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await createTask(owner, { title: 'Rotate keys' });
    await moveTask(owner, first.id, 'in_progress', 'done');

    // Act
    const second = await call(tasks, 'POST', '/tasks', as(owner, { body: { title: 'Rotate keys' } }));
    await moveTask(owner, second.body.data.id, 'cancelled');
    const third = await call(tasks, 'POST', '/tasks', as(owner, { body: { title: 'rotate keys' } }));

    // Assess
    expect(second.status).toBe(201);
    expect(third.status).toBe(201);
  });

  it('answers 409 when reopening or renaming a task into a title an open task has', async () => {
    // Prepare
    const owner = await newUser('owner');
    const finished = await createTask(owner, { title: 'Rotate keys' });
    await moveTask(owner, finished.id, 'in_progress', 'done');
    const open = await createTask(owner, { title: 'Rotate keys' });
    const other = await createTask(owner, { title: 'Audit logs' });

    // Act
    const reopened = await patchTask(owner, finished.id, { status: 'todo' });
    const renamed = await patchTask(owner, other.id, { title: ' rotate KEYS ' });
    const finishedAfter = await getTask(owner, finished.id);
    const otherAfter = await getTask(owner, other.id);

    // Assess
    for (const response of [reopened, renamed]) {
      expect(response.status).toBe(409);
      expect(response.body).toEqual({
        error: {
          code: 'CONFLICT',
          message: expect.any(String),
          details: [{ path: 'body.title', message: expect.any(String), existing_id: open.id }],
        },
      });
    }
    expect(finishedAfter.body.data.status).toBe('done');
    expect(otherAfter.body.data.title).toBe('Audit logs');
  });

  it('frees the title of a task that was deleted', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await createTask(owner, { title: 'Temporary' });
    await deleteTask(owner, first.id);

    // Act
    const again = await call(tasks, 'POST', '/tasks', as(owner, { body: { title: 'Temporary' } }));

    // Assess
    expect(again.status).toBe(201);
  });
});

describe('PATCH /tasks/{id}', () => {
  it('changes the fields given, clears those given as null and keeps the others', async () => {
    // Prepare
    const owner = await newUser('owner');
    const product = await createProduct(owner, 'Console');
    const task = await createTask(owner, {
      title: 'Tune the cache',
      description: 'Hit ratio is low',
      assignee: 'bob',
      product_slug: product.slug,
      tags: 'perf',
      estimated_minutes: 30,
    });

    // Act
    const response = await patchTask(owner, task.id, {
      title: 'Tune the cache eviction',
      description: null,
      assignee: 'Carol',
      priority: 'P0',
      product_slug: null,
      due_date: '2026-06-30T17:00:00Z',
      estimated_minutes: null,
    });
    const fetched = await getTask(owner, task.id);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: taskRecord({
        id: task.id,
        title: 'Tune the cache eviction',
        assignee: 'Carol',
        priority: 'P0',
        tags: 'perf',
        due_date: '2026-06-30T17:00:00Z',
        created_at: task.created_at,
      }),
    });
    expect(response.body.data.updated_at >= task.updated_at).toBe(true);
    expect(fetched.body.data).toEqual({
      ...response.body.data,
      blocking: { blocked_by: [], blocks: [], is_blocked: false },
    });
  });

  it('moves a task through in_progress and review to done and records when it was completed', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Migrate the table' });

    // Act
    const started = await patchTask(owner, task.id, { status: 'in_progress' });
    const inReview = await patchTask(owner, task.id, { status: 'review' });
    const done = await patchTask(owner, task.id, { status: 'done' });

    // Assess
    expect(started.body.data).toMatchObject({ status: 'in_progress', completed_at: null });
    expect(inReview.body.data).toMatchObject({ status: 'review', completed_at: null });
    expect(done.status).toBe(200);
    expect(done.body.data).toEqual(
      taskRecord({
        id: task.id,
        title: 'Migrate the table',
        status: 'done',
        completed_at: expect.stringMatching(ISO_TIME),
        created_at: task.created_at,
      }),
    );
  });

  it('answers 409 with the allowed next states for a move the transition table refuses', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Skip ahead' });

    // Act
    const response = await patchTask(owner, task.id, { status: 'done' });
    const fetched = await getTask(owner, task.id);

    // Assess
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: {
        code: 'CONFLICT',
        message: expect.any(String),
        details: [
          expect.objectContaining({
            path: 'body.status',
            message: expect.any(String),
            from: 'todo',
            allowed: ['in_progress', 'blocked', 'cancelled'],
          }),
        ],
      },
    });
    expect(fetched.body.data.status).toBe('todo');
  });

  it('answers 200 and changes nothing when the status given is the current one', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Stay put' });
    const done = await moveTask(owner, task.id, 'in_progress', 'done');
    const todo = await createTask(owner, { title: 'Still todo' });

    // Act
    const doneAgain = await patchTask(owner, task.id, { status: 'done' });
    const todoAgain = await patchTask(owner, todo.id, { status: 'todo' });

    // Assess
    expect(doneAgain.status).toBe(200);
    expect(doneAgain.body).toEqual({ data: done });
    expect(todoAgain.status).toBe(200);
    expect(todoAgain.body).toEqual({ data: todo });
  });

  const transitions: Record<TaskStatus, TaskStatus[]> = {
    todo: ['in_progress', 'blocked', 'cancelled'],
    in_progress: ['todo', 'review', 'done', 'blocked', 'cancelled'],
    review: ['in_progress', 'done', 'blocked', 'cancelled'],
    blocked: ['todo', 'in_progress', 'cancelled'],
    done: ['todo', 'in_progress'],
    cancelled: ['todo'],
  };
  const statuses = Object.keys(transitions) as TaskStatus[];

  it.each(statuses)('follows the transition table from %s', async (from) => {
    // Prepare: one task in state `from` per target state.
    const owner = await newUser('owner');
    const started: TaskRecord[] = [];
    for (const to of statuses) started.push(await createTask(owner, { title: `From ${from} to ${to}`, status: from }));

    // Act
    const responses = [];
    for (const [index, to] of statuses.entries()) {
      responses.push(await patchTask(owner, started[index]?.id as number, { status: to }));
    }

    // Assess
    for (const [index, to] of statuses.entries()) {
      const response = responses[index] as CallResult;
      if (to === from || transitions[from].includes(to)) {
        expect(response.status, `${from} -> ${to}`).toBe(200);
        expect(response.body.data.status).toBe(to);
      } else {
        expect(response.status, `${from} -> ${to}`).toBe(409);
        expect(response.body.error.code).toBe('CONFLICT');
        expect(response.body.error.details[0]).toMatchObject({
          path: 'body.status',
          from,
          allowed: transitions[from],
        });
      }
    }
  });

  it('answers 404 for an unknown task, 400 for a malformed id and 400 for a blank title', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Keep me' });

    // Act
    const unknown = await patchTask(owner, 999, { title: 'x' });
    const malformed = await patchTask(owner, 'abc', { title: 'x' });
    const blank = await patchTask(owner, task.id, { title: '  ' });

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual(invalid('params.id'));
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual(invalid('body.title'));
  });
});

describe('dependencies and blocking', () => {
  it('shows what a task is blocked by and what it blocks, in id order, blocked while any is open', async () => {
    // Prepare
    const owner = await newUser('owner');
    const schema = await createTask(owner, { title: 'Design the schema' });
    const api = await createTask(owner, { title: 'Build the API' });
    const ui = await createTask(owner, { title: 'Build the UI', depends_on: [api.id, schema.id] });
    const docs = await createTask(owner, { title: 'Write the docs', depends_on: [schema.id] });

    // Act
    const blocked = await getTask(owner, ui.id);
    const blocking = await getTask(owner, schema.id);
    await moveTask(owner, schema.id, 'in_progress', 'done');
    const stillBlocked = await getTask(owner, ui.id);
    await moveTask(owner, api.id, 'cancelled');
    const unblocked = await getTask(owner, ui.id);

    // Assess
    expect(blocked.status).toBe(200);
    expect(blocked.body.data.depends_on).toHaveLength(2);
    expect(blocked.body.data.depends_on).toEqual(expect.arrayContaining([schema.id, api.id]));
    expect(blocked.body.data.blocking).toEqual({
      blocked_by: [ref(schema), ref(api)],
      blocks: [],
      is_blocked: true,
    });
    expect(blocking.body.data.blocking).toEqual({
      blocked_by: [],
      blocks: [ref(ui), ref(docs)],
      is_blocked: false,
    });
    expect(stillBlocked.body.data.blocking).toEqual({
      blocked_by: [ref(schema, 'done'), ref(api)],
      blocks: [],
      is_blocked: true,
    });
    expect(unblocked.body.data.blocking).toEqual({
      blocked_by: [ref(schema, 'done'), ref(api, 'cancelled')],
      blocks: [],
      is_blocked: false,
    });
  });

  it('replaces the dependencies on PATCH, and an empty list clears them on both sides', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await createTask(owner, { title: 'First' });
    const second = await createTask(owner, { title: 'Second' });
    const task = await createTask(owner, { title: 'Third', depends_on: [first.id] });

    // Act
    const replaced = await patchTask(owner, task.id, { depends_on: [second.id] });
    const afterReplace = await Promise.all([getTask(owner, first.id), getTask(owner, second.id)]);
    const cleared = await patchTask(owner, task.id, { depends_on: [] });
    const afterClear = await Promise.all([getTask(owner, task.id), getTask(owner, second.id)]);

    // Assess
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.depends_on).toEqual([second.id]);
    expect(afterReplace[0].body.data.blocking.blocks).toEqual([]);
    expect(afterReplace[1].body.data.blocking.blocks).toEqual([ref(task)]);
    expect(cleared.body.data.depends_on).toEqual([]);
    expect(afterClear[0].body.data.blocking).toEqual({ blocked_by: [], blocks: [], is_blocked: false });
    expect(afterClear[1].body.data.blocking.blocks).toEqual([]);
  });

  it('answers 400 naming body.depends_on for an unknown task, the task itself or a task listed twice', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Self-reliant' });
    const other = await createTask(owner, { title: 'Other' });

    // Act
    const unknownOnCreate = await call(
      tasks,
      'POST',
      '/tasks',
      as(owner, { body: { title: 'Waits for a ghost', depends_on: [999] } }),
    );
    const unknownOnPatch = await patchTask(owner, task.id, { depends_on: [other.id, 999] });
    const itself = await patchTask(owner, task.id, { depends_on: [task.id] });
    const twice = await patchTask(owner, task.id, { depends_on: [other.id, other.id] });
    const fetched = await getTask(owner, task.id);

    // Assess
    for (const response of [unknownOnCreate, unknownOnPatch, itself, twice]) {
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalid('body.depends_on'));
    }
    expect(fetched.body.data.depends_on).toEqual([]);
  });

  it('answers 400 for a dependency that closes a cycle of two or of three tasks', async () => {
    // Prepare
    const owner = await newUser('owner');
    const a = await createTask(owner, { title: 'A' });
    const b = await createTask(owner, { title: 'B', depends_on: [a.id] });
    const c = await createTask(owner, { title: 'C', depends_on: [b.id] });

    // Act
    const twoCycle = await patchTask(owner, a.id, { depends_on: [b.id] });
    const threeCycle = await patchTask(owner, a.id, { depends_on: [c.id] });
    const fetched = await getTask(owner, a.id);

    // Assess
    for (const response of [twoCycle, threeCycle]) {
      expect(response.status).toBe(400);
      expect(response.body).toEqual(invalid('body.depends_on'));
    }
    expect(fetched.body.data.depends_on).toEqual([]);
    expect(fetched.body.data.blocking).toEqual({ blocked_by: [], blocks: [ref(b)], is_blocked: false });
  });
});

describe('GET /tasks', () => {
  it('lists newest first with exact paging meta, clamping the limit to 200', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await createTask(owner, { title: 'One' });
    const second = await createTask(owner, { title: 'Two' });
    const third = await createTask(owner, { title: 'Three' });

    // Act
    const all = await listTasks(owner);
    const page = await listTasks(owner, { limit: '2', offset: '1' });
    const pastTheEnd = await listTasks(owner, { offset: '10' });
    const none = await listTasks(owner, { limit: '0' });
    const clamped = await listTasks(owner, { limit: '500' });

    // Assess
    expect(all.status).toBe(200);
    expect(all.body).toEqual({
      data: [third, second, first],
      meta: { total: 3, limit: 50, offset: 0 },
    });
    expect(page.body).toEqual({ data: [second, first], meta: { total: 3, limit: 2, offset: 1 } });
    expect(pastTheEnd.body).toEqual({ data: [], meta: { total: 3, limit: 50, offset: 10 } });
    expect(none.body).toEqual({ data: [], meta: { total: 3, limit: 0, offset: 0 } });
    expect(clamped.body.meta).toEqual({ total: 3, limit: 200, offset: 0 });
  });

  it('answers 400 for a negative or non-integer limit or offset', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const negative = await listTasks(owner, { limit: '-1' });
    const text = await listTasks(owner, { offset: 'ten' });

    // Assess
    expect(negative.status).toBe(400);
    expect(negative.body).toEqual(invalid('query.limit'));
    expect(text.status).toBe(400);
    expect(text.body).toEqual(invalid('query.offset'));
  });

  it('filters by status, priority, product and assignee, each alone and combined', async () => {
    // Prepare
    const owner = await newUser('owner');
    const alpha = await createProduct(owner, 'Alpha');
    const docs = await createTask(owner, {
      title: 'Write docs',
      priority: 'P1',
      assignee: 'Alice',
      product_slug: alpha.slug,
    });
    const login = await createTask(owner, {
      title: 'Fix login',
      status: 'in_progress',
      priority: 'P0',
      assignee: 'bob',
    });
    const sprint = await createTask(owner, { title: 'Plan sprint', status: 'review', assignee: 'ALICE' });
    const idea = await createTask(owner, { title: 'Old idea', status: 'archived', priority: 'P3' });
    const release = await createTask(owner, {
      title: 'Ship release',
      status: 'done',
      priority: 'P1',
      product_slug: alpha.slug,
    });

    // Act
    const open = await listTasks(owner, { status: 'todo,in_progress' });
    const archived = await listTasks(owner, { status: 'archived' });
    const cancelled = await listTasks(owner, { status: 'cancelled' });
    const urgent = await listTasks(owner, { priority: 'P0,P1' });
    const inAlpha = await listTasks(owner, { product: alpha.slug });
    const forAlice = await listTasks(owner, { assignee: 'alice' });
    const combined = await listTasks(owner, {
      status: 'todo,review',
      assignee: 'Alice',
      priority: 'P1',
      product: alpha.slug,
    });
    const notNext = await listTasks(owner, { next: 'false', status: 'done' });

    // Assess
    expect(open.body).toEqual({ data: [login, docs], meta: { total: 2, limit: 50, offset: 0 } });
    expect(idsOf(archived)).toEqual([idea.id]);
    expect(idsOf(cancelled)).toEqual([idea.id]);
    expect(idsOf(urgent)).toEqual([release.id, login.id, docs.id]);
    expect(idsOf(inAlpha)).toEqual([release.id, docs.id]);
    expect(idsOf(forAlice)).toEqual([sprint.id, docs.id]);
    expect(combined.body).toEqual({ data: [docs], meta: { total: 1, limit: 50, offset: 0 } });
    expect(idsOf(notNext)).toEqual([release.id]);
  });

  it('lists a task under its current assignee and status after it is reassigned and moved', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Triage reports', assignee: 'alice' });
    await createTask(owner, { title: 'Unrelated', assignee: 'bob', status: 'review' });

    // Act
    const moved = await patchTask(owner, task.id, { assignee: 'Bob', status: 'in_progress' });
    const forAlice = await listTasks(owner, { assignee: 'alice' });
    const forBob = await listTasks(owner, { assignee: 'bob' });
    const bobInProgress = await listTasks(owner, { assignee: 'BOB', status: 'in_progress' });
    const bobTodo = await listTasks(owner, { assignee: 'bob', status: 'todo' });
    const unassigned = await patchTask(owner, task.id, { assignee: null });
    const bobAfter = await listTasks(owner, { assignee: 'bob', status: 'in_progress' });

    // Assess
    expect(moved.status).toBe(200);
    expect(forAlice.body.meta.total).toBe(0);
    expect(forBob.body.meta.total).toBe(2);
    expect(bobInProgress.body).toEqual({ data: [moved.body.data], meta: { total: 1, limit: 50, offset: 0 } });
    expect(bobTodo.body.meta.total).toBe(0);
    expect(unassigned.status).toBe(200);
    expect(bobAfter.body.meta.total).toBe(0);
  });

  it('pages a filtered list with the filtered total', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created: TaskRecord[] = [];
    for (let i = 1; i <= 5; i++)
      created.push(await createTask(owner, { title: `Task ${i}`, priority: i % 2 ? 'P1' : 'P3' }));

    // Act
    const page = await listTasks(owner, { priority: 'P1', limit: '2', offset: '1' });

    // Assess
    expect(page.body.meta).toEqual({ total: 3, limit: 2, offset: 1 });
    expect(idsOf(page)).toEqual([created[2]?.id, created[0]?.id]);
  });

  it('reads assignee=me as the caller’s username, in any case', async () => {
    // Prepare
    const owner = await newUser('owner');
    const mine = await createTask(owner, { title: 'Mine', assignee: owner.username.toUpperCase() });
    await createTask(owner, { title: 'Theirs', assignee: 'someone-else' });
    await createTask(owner, { title: 'Nobody’s' });

    // Act
    const me = await listTasks(owner, { assignee: 'me' });

    // Assess
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ data: [mine], meta: { total: 1, limit: 50, offset: 0 } });
  });

  it('answers 400 to assignee=me from an API key, which has no user behind it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Visible to the key' });
    const key = await call(apiKeys, 'POST', `/organizations/${owner.orgId}/api-keys`, {
      token: owner.token,
      body: { name: 'reader' },
    });
    const keyToken = key.body.data.key as string;

    // Act
    const listed = await call(tasks, 'GET', '/tasks', { token: keyToken });
    const me = await call(tasks, 'GET', '/tasks', { token: keyToken, query: { assignee: 'me' } });

    // Assess
    expect(key.status).toBe(201);
    expect(idsOf(listed)).toEqual([task.id]);
    expect(me.status).toBe(400);
    expect(me.body).toEqual(invalid('query.assignee'));
  });

  it('answers 400 for an unknown status or priority and for a malformed next', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const status = await listTasks(owner, { status: 'todo,finished' });
    const priority = await listTasks(owner, { priority: 'P1,P7' });
    const next = await listTasks(owner, { next: 'yes' });

    // Assess
    expect(status.status).toBe(400);
    expect(status.body).toEqual(invalid('query.status'));
    expect(status.body.error.details[0].message).toContain('finished');
    expect(priority.status).toBe(400);
    expect(priority.body).toEqual(invalid('query.priority'));
    expect(next.status).toBe(400);
    expect(next.body).toEqual(invalid('query.next'));
  });
  it('treats an empty status and a blank q as no filter, and a q of punctuation alone as 400', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await createTask(owner, { title: 'Ship the release' });
    const second = await createTask(owner, { title: 'Write the notes', status: 'in_progress' });

    // Act
    const emptyStatus = await listTasks(owner, { status: '' });
    const commas = await listTasks(owner, { status: ' , ' });
    const blankQ = await listTasks(owner, { q: '   ' });
    const punctuation = await listTasks(owner, { q: '-- !' });

    // Assess
    const everything = { data: [second, first], meta: { total: 2, limit: 50, offset: 0 } };
    expect(emptyStatus.body).toEqual(everything);
    expect(commas.body).toEqual(everything);
    expect(blankQ.body).toEqual(everything);
    expect(punctuation.status).toBe(400);
    expect(punctuation.body).toEqual(invalid('query.q'));
  });
});

describe('GET /tasks?q (full-text search)', () => {
  it('finds tasks whose title or description words begin with every word of q, ignoring case and accents', async () => {
    // Prepare
    const owner = await newUser('owner');
    const checklist = await createTask(owner, { title: 'Deployment checklist' });
    const pipeline = await createTask(owner, { title: 'deploy pipeline', description: 'Builds and ships' });
    const cafe = await createTask(owner, { title: 'Café menu', description: 'Update the Résumé page' });
    await createTask(owner, { title: 'Unrelated chore', description: 'Nothing to see' });

    // Act
    const deploy = await listTasks(owner, { q: 'deploy' });
    const deployPipe = await listTasks(owner, { q: 'DEPLOY pipe' });
    const acrossFields = await listTasks(owner, { q: 'deploy ships' });
    const middle = await listTasks(owner, { q: 'ploy' });
    const unaccented = await listTasks(owner, { q: 'cafe' });
    const accented = await listTasks(owner, { q: 'RÉSUMÉ pa' });
    const nothing = await listTasks(owner, { q: 'deploy menu' });

    // Assess
    expect(deploy.body).toEqual({ data: [pipeline, checklist], meta: { total: 2, limit: 50, offset: 0 } });
    expect(idsOf(deployPipe)).toEqual([pipeline.id]);
    expect(idsOf(acrossFields)).toEqual([pipeline.id]);
    expect(middle.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(idsOf(unaccented)).toEqual([cafe.id]);
    expect(idsOf(accented)).toEqual([cafe.id]);
    expect(idsOf(nothing)).toEqual([]);
  });

  it('combines q with status and assignee, and pages the matches', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTask(owner, { title: 'Deploy staging', status: 'in_progress', assignee: 'alice' });
    const production = await createTask(owner, { title: 'Deploy production', assignee: 'bob' });
    const docs = await createTask(owner, { title: 'Deploy docs', assignee: 'Alice' });
    await createTask(owner, { title: 'Review docs', assignee: 'alice' });

    // Act
    const todoForAlice = await listTasks(owner, { q: 'deploy', status: 'todo', assignee: 'alice' });
    const todo = await listTasks(owner, { q: 'deploy', status: 'todo' });
    const paged = await listTasks(owner, { q: 'deploy', limit: '1', offset: '1' });

    // Assess
    expect(idsOf(todoForAlice)).toEqual([docs.id]);
    expect(idsOf(todo)).toEqual([docs.id, production.id]);
    expect(paged.body).toEqual({ data: [production], meta: { total: 3, limit: 1, offset: 1 } });
  });

  it('finds a renamed task by its new words only, and a deleted task not at all', async () => {
    // Prepare
    const owner = await newUser('owner');
    const renamed = await createTask(owner, { title: 'Refactor billing', description: 'Old module' });
    const removed = await createTask(owner, { title: 'Obsolete report' });
    await patchTask(owner, renamed.id, { title: 'Rewrite invoices', description: 'New engine' });
    await deleteTask(owner, removed.id);

    // Act
    const oldTitle = await listTasks(owner, { q: 'refactor' });
    const oldDescription = await listTasks(owner, { q: 'module' });
    const newTitle = await listTasks(owner, { q: 'invoices' });
    const newDescription = await listTasks(owner, { q: 'engine rewrite' });
    const deleted = await listTasks(owner, { q: 'obsolete' });

    // Assess
    expect(oldTitle.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(oldDescription.body.meta.total).toBe(0);
    expect(idsOf(newTitle)).toEqual([renamed.id]);
    expect(idsOf(newDescription)).toEqual([renamed.id]);
    expect(deleted.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
  });

  it('answers 400 for q longer than 200 characters', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const tooLong = await listTasks(owner, { q: 'a'.repeat(201) });
    const longest = await listTasks(owner, { q: 'a'.repeat(200) });

    // Assess
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual(invalid('query.q'));
    expect(longest.status).toBe(200);
  });
});

describe('GET /tasks?next=true', () => {
  it('answers the most urgent todo task, the oldest first, passing over those with open dependencies', async () => {
    // Prepare
    const owner = await newUser('owner');
    const blocker = await createTask(owner, { title: 'Blocker', priority: 'P3' });
    await createTask(owner, { title: 'Low', priority: 'P3' });
    const waiting = await createTask(owner, {
      title: 'Urgent but waiting',
      priority: 'P0',
      depends_on: [blocker.id],
    });
    await createTask(owner, { title: 'Urgent, started', priority: 'P0', status: 'in_progress' });
    const urgent = await createTask(owner, { title: 'Urgent', priority: 'P0' });
    await createTask(owner, { title: 'Urgent, later', priority: 'P0' });

    // Act
    const next = await listTasks(owner, { next: 'true' });
    const withLimit = await listTasks(owner, { next: 'true', limit: '10', offset: '3' });
    await moveTask(owner, blocker.id, 'in_progress', 'done');
    const released = await listTasks(owner, { next: 'true' });

    // Assess
    expect(next.status).toBe(200);
    expect(next.body).toEqual({ data: [urgent], meta: { total: 1, limit: 1, offset: 0 } });
    expect(withLimit.body).toEqual(next.body);
    expect(released.body).toEqual({ data: [waiting], meta: { total: 1, limit: 1, offset: 0 } });
  });

  it('answers the next task of one assignee, of the caller for me, and an empty list when there is none', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTask(owner, { title: 'For alice, P2', assignee: 'Alice' });
    const bobs = await createTask(owner, { title: 'For bob, P0', assignee: 'bob', priority: 'P0' });
    const alices = await createTask(owner, { title: 'For alice, P1', assignee: 'ALICE', priority: 'P1' });
    const mine = await createTask(owner, { title: 'For me', assignee: owner.username, priority: 'P3' });
    await createTask(owner, { title: 'Carol’s, done', assignee: 'carol', status: 'done' });

    // Act
    const anyone = await listTasks(owner, { next: 'true' });
    const alice = await listTasks(owner, { next: 'true', assignee: 'alice' });
    const me = await listTasks(owner, { next: 'true', assignee: 'me' });
    const carol = await listTasks(owner, { next: 'true', assignee: 'carol' });

    // Assess
    expect(idsOf(anyone)).toEqual([bobs.id]);
    expect(alice.body).toEqual({ data: [alices], meta: { total: 1, limit: 1, offset: 0 } });
    expect(idsOf(me)).toEqual([mine.id]);
    expect(carol.body).toEqual({ data: [], meta: { total: 0, limit: 1, offset: 0 } });
  });

  it('treats a cancelled dependency as finished', async () => {
    // Prepare
    const owner = await newUser('owner');
    const dropped = await createTask(owner, { title: 'Dropped', priority: 'P3' });
    const waiting = await createTask(owner, { title: 'Waiting', priority: 'P0', depends_on: [dropped.id] });

    // Act
    const before = await listTasks(owner, { next: 'true' });
    await moveTask(owner, dropped.id, 'cancelled');
    const after = await listTasks(owner, { next: 'true' });

    // Assess
    expect(idsOf(before)).toEqual([dropped.id]);
    expect(idsOf(after)).toEqual([waiting.id]);
  });

  it('passes over a task once it leaves todo, for one assignee and for all, and takes it back on return', async () => {
    // Prepare
    const owner = await newUser('owner');
    const started = await createTask(owner, { title: 'Started later', assignee: 'dana', priority: 'P0' });
    const waiting = await createTask(owner, { title: 'Still todo', assignee: 'dana', priority: 'P2' });

    // Act
    await moveTask(owner, started.id, 'in_progress');
    const forDana = await listTasks(owner, { next: 'true', assignee: 'dana' });
    const forAnyone = await listTasks(owner, { next: 'true' });
    await moveTask(owner, started.id, 'todo');
    const afterReturn = await listTasks(owner, { next: 'true', assignee: 'dana' });

    // Assess
    expect(idsOf(forDana)).toEqual([waiting.id]);
    expect(idsOf(forAnyone)).toEqual([waiting.id]);
    expect(idsOf(afterReturn)).toEqual([started.id]);
  });

  it('answers 400 when next=true is combined with status or q', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createTask(owner, { title: 'Anything' });

    // Act
    const withStatus = await listTasks(owner, { next: 'true', status: 'todo' });
    const withQ = await listTasks(owner, { next: 'true', q: 'anything' });

    // Assess
    for (const response of [withStatus, withQ]) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('DELETE /tasks/{id}', () => {
  it('lets the organization’s owner delete a task', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Throwaway' });

    // Act
    const response = await call(tasks, 'DELETE', `/tasks/${task.id}`, as(owner));
    const fetched = await getTask(owner, task.id);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { id: task.id }, meta: { deleted: true } });
    expect(fetched.status).toBe(404);
  });

  it('lets an admin key of the organization delete a task for good, after which it is gone', async () => {
    // Prepare
    const owner = await newUser('owner');
    const task = await createTask(owner, { title: 'Throwaway' });
    const kept = await createTask(owner, { title: 'Keeper' });

    // Act
    const response = await deleteTask(owner, task.id);
    const fetched = await getTask(owner, task.id);
    const list = await listTasks(owner);
    const again = await deleteTask(owner, task.id);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { id: task.id }, meta: { deleted: true } });
    expect(fetched.status).toBe(404);
    expect(fetched.body).toEqual(notFound);
    expect(list.body).toEqual({ data: [kept], meta: { total: 1, limit: 50, offset: 0 } });
    expect(again.status).toBe(404);
  });

  it('answers 403 to a member, who may still create and update tasks', async () => {
    // Prepare
    const owner = await newUser('owner');
    const member = await newUser('member');
    await joinOrganization(member, owner.orgId, 'member');
    const inOrg = { token: member.token, headers: { 'x-organization-id': owner.orgId } };
    const task = await createTask(owner, { title: 'Shared work' });

    // Act
    const created = await call(tasks, 'POST', '/tasks', { ...inOrg, body: { title: 'Member’s task' } });
    const updated = await call(tasks, 'PATCH', `/tasks/${task.id}`, {
      ...inOrg,
      body: { status: 'in_progress' },
    });
    const refused = await call(tasks, 'DELETE', `/tasks/${task.id}`, inOrg);
    const fetched = await getTask(owner, task.id);

    // Assess
    expect(created.status).toBe(201);
    expect(updated.status).toBe(200);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(fetched.status).toBe(200);
  });

  it('answers 400 for a malformed id and 404 for an unknown task', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const malformed = await deleteTask(owner, 'abc');
    const zero = await deleteTask(owner, 0);
    const unknown = await deleteTask(owner, 4242);

    // Assess
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual(invalid('params.id'));
    expect(zero.status).toBe(400);
    expect(zero.body).toEqual(invalid('params.id'));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
  });

  it('takes the deleted task out of the dependencies of the tasks that depended on it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const removed = await createTask(owner, { title: 'Goes away' });
    const kept = await createTask(owner, { title: 'Stays' });
    const single = await createTask(owner, { title: 'Depends on one', depends_on: [removed.id] });
    const both = await createTask(owner, { title: 'Depends on two', depends_on: [removed.id, kept.id] });

    // Act
    await deleteTask(owner, removed.id);
    const singleAfter = await getTask(owner, single.id);
    const bothAfter = await getTask(owner, both.id);

    // Assess
    expect(singleAfter.body.data.depends_on).toEqual([]);
    expect(singleAfter.body.data.blocking).toEqual({ blocked_by: [], blocks: [], is_blocked: false });
    expect(bothAfter.body.data.depends_on).toEqual([kept.id]);
    expect(bothAfter.body.data.blocking).toEqual({ blocked_by: [ref(kept)], blocks: [], is_blocked: true });
  });
});

describe('product stats', () => {
  it('counts the product’s tasks by status as they are created, moved, moved away and deleted', async () => {
    // Prepare
    const owner = await newUser('owner');
    const product = await createProduct(owner, 'Rocket');
    const other = await createProduct(owner, 'Satellite');
    await createTask(owner, { title: 'Fuel', product_slug: product.slug });
    const second = await createTask(owner, { title: 'Engine', product_slug: product.slug });
    const third = await createTask(owner, { title: 'Paint', product_slug: product.slug });
    const fourth = await createTask(owner, { title: 'Antenna', product_slug: product.slug });

    // Act
    await moveTask(owner, second.id, 'in_progress', 'done');
    await deleteTask(owner, third.id);
    await patchTask(owner, fourth.id, { product_slug: other.slug });
    const rocket = await call(products, 'GET', `/products/${product.slug}`, as(owner));
    const satellite = await call(products, 'GET', `/products/${other.slug}`, as(owner));

    // Assess
    expect(rocket.status).toBe(200);
    expect(rocket.body.data.stats).toEqual({
      tasks: { todo: 1, in_progress: 0, review: 0, done: 1, blocked: 0, cancelled: 0 },
      total_tasks: 2,
      open_tasks: 1,
    });
    expect(satellite.body.data.stats.tasks).toEqual({
      todo: 1,
      in_progress: 0,
      review: 0,
      done: 0,
      blocked: 0,
      cancelled: 0,
    });
  });
});

describe('task creation limit', () => {
  it('answers the 31st create of a minute with 429 and Retry-After, counting both APIs together', async () => {
    // Prepare: the limit counts fixed minutes; a fixed clock keeps all 32 creates in one of them.
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const limited = tasksHandler({ ports: { clock: fixedClock(new Date(minute + 60_000 + 1_000)) } });
    const owner = await newUser('owner');

    // Act
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 1; i <= 30; i++) {
      const path = i % 2 ? '/tasks' : '/v1/public/tasks';
      const response = await call(limited, 'POST', path, as(owner, { body: { title: `Task ${i}` } }));
      statuses.push(response.status);
      remaining.push(response.headers['X-RateLimit-Remaining'] as string);
    }
    const refused = await call(limited, 'POST', '/tasks', as(owner, { body: { title: 'One too many' } }));
    const refusedPublic = await call(limited, 'POST', '/v1/public/tasks', as(owner, { body: { title: 'Another' } }));
    const list = await listTasks(owner, { limit: '0' });

    // Assess
    expect(statuses).toEqual(Array(30).fill(201));
    for (const response of [refused, refusedPublic]) {
      expect(response.status).toBe(429);
      expect(response.body.error.code).toBe('RATE_LIMITED');
      const retryAfter = Number(response.headers['Retry-After']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The headers describe the bucket that refused the request, not the tier's roomier minute.
      expect(response.headers).toMatchObject({
        'X-RateLimit-Limit': '30',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(minute / 1000 + 120),
      });
    }
    expect(remaining.slice(0, 3)).toEqual(['29', '28', '27']);
    expect(list.status).toBe(200);
    expect(list.body.meta.total).toBe(30);
  });
});
