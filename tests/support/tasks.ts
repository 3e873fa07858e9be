import { expect } from 'vitest';
import { handler as products } from '#functions/http/products';
import { tasksHandler } from '#functions/http/tasks';
import { type CallOptions, type CallResult, call, type TestUser } from '#tests/support/identity';
import { testQueue } from '#tests/support/queues';

/**
 * Test helpers for tasks: the records and error bodies the two tasks APIs (`/tasks` and
 * `/v1/public/tasks`) answer, and calls that create, change, list and move tasks as a given user.
 */

/** A task's state as the API shows it (`archived` is accepted on input but stored as `cancelled`). */

/** The tasks function as the helpers below call it, publishing to the queue each test chooses. */
const tasks = tasksHandler({ ports: { queue: testQueue } });

export type TaskStatus = 'todo' | 'in_progress' | 'review' | 'done' | 'blocked' | 'cancelled';

/** A task as either API answers it; the fields tests read by name are typed, the others are unknown. */
export interface TaskRecord {
  id: number;
  title: string;
  status: TaskStatus;
  assignee: string | null;
  depends_on: number[];
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

/** An ISO 8601 UTC timestamp, as the API writes `created_at`, `updated_at` and `completed_at`. */
export const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** `options` with the user's token, to call as that user. */
export const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({
  ...options,
  token: user.token,
});

/** A task as `/tasks` shows it: the defaults of a bare create, overridden by `fields`. */
export const taskRecord = (fields: Record<string, unknown>) => ({
  id: expect.any(Number),
  title: expect.any(String),
  description: null,
  status: 'todo',
  priority: 'P2',
  assignee: null,
  product: null,
  product_id: null,
  category: null,
  tags: null,
  type: null,
  estimated_minutes: null,
  due_date: null,
  resolution: null,
  max_duration_seconds: null,
  depends_on: [],
  completed_at: null,
  last_run: null,
  created_at: expect.stringMatching(ISO_TIME),
  updated_at: expect.stringMatching(ISO_TIME),
  ...fields,
});

/** A task as `/v1/public/tasks` shows it: the `/tasks` record plus `assigned_to`, overridden by `fields`. */
export const publicTaskRecord = (fields: Record<string, unknown>) => taskRecord({ assigned_to: null, ...fields });

/** The 400 body of a request refused for one invalid field, named by its `path` (e.g. `body.title`). */
export const invalid = (path: string) => ({
  error: {
    code: 'VALIDATION_ERROR',
    message: expect.any(String),
    details: [{ path, message: expect.any(String) }],
  },
});

/** The 404 body of an unknown (or another organization's) resource. */
export const notFound = { error: { code: 'NOT_FOUND', message: expect.any(String), details: [] } };

const OPERATIONAL = '/tasks';
const PUBLIC = '/v1/public/tasks';

async function createAt(base: string, user: TestUser, body: Record<string, unknown>, options: CallOptions) {
  const response = await call(tasks, 'POST', base, { ...as(user, options), body });
  if (response.status !== 201) throw new Error(`create task failed: ${JSON.stringify(response.body)}`);
  return response.body.data as TaskRecord;
}

/** Creates a task on `/tasks` as the user, failing unless it is created; answers the record. */
export const createTask = (user: TestUser, body: Record<string, unknown>, options: CallOptions = {}) =>
  createAt(OPERATIONAL, user, body, options);

/** Creates a task on `/v1/public/tasks` as the user, failing unless it is created; answers the record. */
export const createPublicTask = (user: TestUser, body: Record<string, unknown>, options: CallOptions = {}) =>
  createAt(PUBLIC, user, body, options);

/** Creates a product named `name` as the user, failing unless it is created; answers its id and slug. */
export async function createProduct(user: TestUser, name: string) {
  const response = await call(products, 'POST', '/products', as(user, { body: { name } }));
  if (response.status !== 201) throw new Error(`create product failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; slug: string };
}

/** PATCH /tasks/{id} as the user. */
export const patchTask = (user: TestUser, id: number | string, body: Record<string, unknown>) =>
  call(tasks, 'PATCH', `${OPERATIONAL}/${id}`, as(user, { body }));

/** PATCH /v1/public/tasks/{id} as the user. */
export const patchPublicTask = (user: TestUser, id: number | string, body: Record<string, unknown>) =>
  call(tasks, 'PATCH', `${PUBLIC}/${id}`, as(user, { body }));

/** GET /tasks as the user, with `query` as its query string. */
export const listTasks = (user: TestUser, query: Record<string, string> = {}) =>
  call(tasks, 'GET', OPERATIONAL, as(user, { query }));

/** GET /v1/public/tasks as the user, with `query` as its query string. */
export const listPublicTasks = (user: TestUser, query: Record<string, string> = {}) =>
  call(tasks, 'GET', PUBLIC, as(user, { query }));

/** Moves a task through `statuses` in order on `/tasks`, failing on the first refusal; answers the last record. */
export async function moveTask(user: TestUser, id: number, ...statuses: TaskStatus[]): Promise<TaskRecord> {
  let last: CallResult | undefined;
  for (const status of statuses) {
    last = await patchTask(user, id, { status });
    if (last.status !== 200) throw new Error(`move to ${status} failed: ${JSON.stringify(last.body)}`);
  }
  return last?.body.data as TaskRecord;
}

/** The ids of the tasks a list response holds, in its order. */
export const idsOf = (response: CallResult): number[] => response.body.data.map((task: { id: number }) => task.id);
