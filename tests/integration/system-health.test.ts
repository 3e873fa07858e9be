import { beforeAll, describe, expect, it } from 'vitest';
import { handler as products } from '#functions/http/products';
import { systemHandler } from '#functions/http/system';
import type { AgentItem } from '#lib/agents/agent-keys';
import { table } from '#lib/db/table';
import { fixedClock } from '#lib/kernel/clock';
import { executionKeys, type StageItem } from '#lib/pipelines/execution-keys';
import { STAGE_TIMEOUT_DEFAULT } from '#lib/pipelines/pipeline-keys';
import { taskKeys } from '#lib/tasks/task-keys';
import { seedAgent } from '#tests/support/agents';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import { seedRunningExecution } from '#tests/support/pipelines';
import { createTask, moveTask } from '#tests/support/tasks';

/**
 * GET /system/health against DynamoDB Local: each check made to fail by seeded records (agents and
 * pipeline executions written directly, tasks and products through their APIs), and the score computed
 * as the route's description says: a check costs `weight × failing / checked` of its section's 100, the
 * organization's score weighs the sections agent 35, task 35 and product 20 (the file section applies
 * to nothing yet).
 */
beforeAll(async () => {
  // The first user of this file's table is its instance admin; every user below is an ordinary one.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

/** GET /system/health as `user`, the clock `aheadSec` seconds from now. */
async function health(user: TestUser, aheadSec = 0) {
  const handler = systemHandler({ ports: { clock: fixedClock(new Date(Date.now() + aheadSec * 1000)) } });
  const response = await call(handler, 'GET', '/system/health', as(user));
  if (response.status !== 200) throw new Error(`health failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** A section's checks as answered, by id. */
const checksOf = (data: { sections: Record<string, { checks: Array<{ id: string }> }> }, section: string) =>
  Object.fromEntries((data.sections[section]?.checks ?? []).map((check) => [check.id, check]));

/** A failed check: `count` of the `checked` records failing, costing `penalty`, with these examples. */
const failed = (count: number, checked: number, penalty: number, examples: Array<{ id: number; name: string }>) => ({
  status: 'failed',
  checked,
  count,
  penalty,
  examples,
});

/** A scheduled agent (idle, a 60 s schedule) whose last heartbeat was `heartbeatAgoSec` ago. */
const scheduledAgent = (orgId: string, name: string, heartbeatAgoSec: number, fields: Partial<AgentItem> = {}) =>
  seedAgent(orgId, {
    name,
    interval_sec: 60,
    schedule: { expression: 'rate(1 minute)', enabled: true, interval_sec: 60, anchor_at: ago(3600), note: null },
    last_heartbeat: ago(heartbeatAgoSec),
    ...fields,
  });

/** A running execution (of pipeline 1) with one stage as `stage` says, written as the engine writes them. */
async function seedExecution(orgId: string, id: number, stage: Partial<StageItem> & { name: string }) {
  await seedRunningExecution(orgId, id, ago(3600));
  const item: StageItem = {
    ...executionKeys.stage(orgId, id, stage.name),
    execution_id: id,
    pipeline_id: 1,
    agent: 'builder',
    order: 0,
    depends_on: [],
    dependents: [],
    remaining: 0,
    config: {},
    status: 'running',
    attempts: 1,
    output: null,
    error: null,
    tokens_used: 0,
    started_at: ago(10),
    finished_at: null,
    ...stage,
  };
  await table.put({ Item: item });
}

async function createProduct(user: TestUser, body: Record<string, unknown>) {
  const response = await call(products, 'POST', '/products', as(user, { body }));
  if (response.status !== 201) throw new Error(`create product failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; slug: string; name: string };
}

describe('GET /system/health', () => {
  it('answers 100 for a new organization, every check not applicable and the file section apart', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(systemHandler(), 'GET', '/system/health', as(owner));

    // Assess
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(data).toMatchObject({ score: 100, status: 'healthy', failed_checks: [], complete: true });
    expect(Object.keys(data.sections)).toEqual(['agent', 'task', 'product', 'file']);
    for (const section of ['agent', 'task', 'product']) {
      expect(data.sections[section]).toMatchObject({ score: 100, applicable: true, note: null });
      for (const check of data.sections[section].checks) {
        expect(check).toMatchObject({ status: 'not_applicable', checked: 0, count: 0, penalty: 0, examples: [] });
      }
    }
    expect(data.sections.file).toEqual({
      score: 100,
      weight: 10,
      applicable: false,
      note: expect.stringContaining('no file storage'),
      checks: [
        {
          id: 'file_storage',
          description: expect.stringContaining('no file check applies'),
          weight: 100,
          status: 'not_applicable',
          checked: 0,
          count: 0,
          penalty: 0,
          examples: [],
        },
      ],
    });
  });

  it('finds missed heartbeats, agents in error and agents starved of tokens, and scores them', async () => {
    // Prepare: four scheduled agents (one silent for 10 min of a 60 s schedule, one starved), one in
    // error, and a stopped agent whose old heartbeat does not count.
    const owner = await newUser('owner');
    const silent = await scheduledAgent(owner.orgId, 'silent', 600);
    await scheduledAgent(owner.orgId, 'fresh', 30);
    const starved = await scheduledAgent(owner.orgId, 'starved', 30, { skip_reason: 'insufficient_balance' });
    await scheduledAgent(owner.orgId, 'lively', 100);
    const broken = await seedAgent(owner.orgId, { name: 'broken', status: 'error', last_error: 'boom' });
    await scheduledAgent(owner.orgId, 'paused', 6000, { status: 'stopped' });

    // Act
    const data = await health(owner);

    // Assess: heartbeats 30 × 1/4 = 7.5, errors 30 × 1/6 = 5, starved 15 × 1/4 = 3.75 → 3.8; 100 - 16.3 → 84.
    expect(checksOf(data, 'agent')).toMatchObject({
      agent_heartbeat_missed: failed(1, 4, 7.5, [{ id: silent.id, name: 'silent' }]),
      agent_error: failed(1, 6, 5, [{ id: broken.id, name: 'broken' }]),
      agent_starved: failed(1, 4, 3.8, [{ id: starved.id, name: 'starved' }]),
      pipeline_stuck: { status: 'not_applicable' },
    });
    expect(data.sections.agent.score).toBe(84);
    // (84 × 35 + 100 × 35 + 100 × 20) / 90 = 93.8
    expect(data).toMatchObject({
      score: 94,
      status: 'healthy',
      failed_checks: ['agent_heartbeat_missed', 'agent_error', 'agent_starved'],
    });
  });

  it('counts a never-seen scheduled agent from its creation', async () => {
    // Prepare
    const owner = await newUser('owner');
    await scheduledAgent(owner.orgId, 'mute', 0, { last_heartbeat: null, created_at: ago(600) });

    // Act
    const data = await health(owner);

    // Assess
    expect(checksOf(data, 'agent').agent_heartbeat_missed).toMatchObject({ status: 'failed', count: 1, penalty: 30 });
  });

  it('finds tasks in progress past their max duration or the 24 h default, and blocked tasks', async () => {
    // Prepare
    const owner = await newUser('owner');
    const timed = await createTask(owner, { title: 'Timed work', max_duration_seconds: 60 });
    await moveTask(owner, timed.id, 'in_progress');
    const open = await createTask(owner, { title: 'Open-ended work' });
    await moveTask(owner, open.id, 'in_progress');
    const stuck = await createTask(owner, { title: 'Waiting on a key' });
    await moveTask(owner, stuck.id, 'blocked');
    const reviewed = await createTask(owner, { title: 'Ready' });
    await moveTask(owner, reviewed.id, 'in_progress', 'review');
    await createTask(owner, { title: 'Backlog' });

    // Act: now; two minutes on; and with the open-ended task last changed 25 hours ago.
    const now = await health(owner);
    const soon = await health(owner, 120);
    await table.update({
      Key: taskKeys.byId(owner.orgId, open.id),
      UpdateExpression: 'SET updated_at = :at',
      ExpressionAttributeValues: { ':at': ago(25 * 3600) },
    });
    const later = await health(owner, 120);

    // Assess: blocked 50 × 1/4 = 12.5 throughout; overdue 0, then 50 × 1/2 = 25, then 50 × 2/2.
    expect(checksOf(now, 'task')).toMatchObject({
      task_overdue: { status: 'passed', checked: 2, count: 0 },
      task_blocked: failed(1, 4, 12.5, [{ id: stuck.id, name: 'Waiting on a key' }]),
    });
    expect(now.sections.task.score).toBe(88);
    expect(checksOf(soon, 'task').task_overdue).toMatchObject({
      status: 'failed',
      count: 1,
      penalty: 25,
      examples: [{ id: timed.id, name: 'Timed work' }],
    });
    expect(soon.sections.task.score).toBe(63);
    // (100 × 35 + 63 × 35 + 100 × 20) / 90 = 85.6
    expect(soon).toMatchObject({ score: 86, status: 'degraded' });
    expect(checksOf(later, 'task').task_overdue).toMatchObject({ count: 2, penalty: 50 });
    expect(later.sections.task.score).toBe(38);
  });

  it('finds products without tasks and products being built with no open task', async () => {
    // Prepare
    const owner = await newUser('owner');
    const empty = await createProduct(owner, { name: 'Empty idea' });
    const finished = await createProduct(owner, { name: 'Finished build', status: 'building' });
    const done = await createTask(owner, { title: 'Only task', product_slug: finished.slug });
    await moveTask(owner, done.id, 'in_progress', 'done');
    await createProduct(owner, { name: 'Shelved', status: 'archived' });
    const busy = await createProduct(owner, { name: 'Busy', status: 'active' });
    await createTask(owner, { title: 'Next step', product_slug: busy.slug });

    // Act
    const data = await health(owner);

    // Assess: without tasks 60 × 1/3 = 20; stalled 40 × 1/1 = 40.
    expect(checksOf(data, 'product')).toMatchObject({
      product_without_tasks: failed(1, 3, 20, [{ id: empty.id, name: 'Empty idea' }]),
      product_stalled: failed(1, 1, 40, [{ id: finished.id, name: 'Finished build' }]),
    });
    expect(data.sections.product.score).toBe(40);
    // (100 × 35 + 100 × 35 + 40 × 20) / 90 = 86.7
    expect(data).toMatchObject({ score: 87, status: 'degraded' });
  });

  it('finds pipeline executions stuck on a stage past its timeout or queued too long, its own only', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    await seedExecution(owner.orgId, 1, { name: 'build', started_at: ago(STAGE_TIMEOUT_DEFAULT + 120) });
    await seedExecution(owner.orgId, 2, { name: 'deploy', status: 'queued', started_at: null, queued_at: ago(600) });
    await seedExecution(owner.orgId, 3, { name: 'test', started_at: ago(30) });
    await seedExecution(owner.orgId, 4, { name: 'lint', status: 'queued', started_at: null, queued_at: ago(30) });
    await seedExecution(stranger.orgId, 1, { name: 'theirs', started_at: ago(STAGE_TIMEOUT_DEFAULT + 120) });

    // Act
    const data = await health(owner);
    const theirs = await health(stranger);

    // Assess: 25 × 2/4 = 12.5 → 88 (87.5 rounds up).
    expect(checksOf(data, 'agent').pipeline_stuck).toMatchObject(
      failed(2, 4, 12.5, [
        { id: 1, name: 'release / build' },
        { id: 2, name: 'release / deploy' },
      ]),
    );
    expect(data.sections.agent.score).toBe(88);
    expect(checksOf(theirs, 'agent').pipeline_stuck).toMatchObject({
      checked: 1,
      count: 1,
      examples: [{ id: 1, name: 'release / theirs' }],
    });
  });

  it('never counts another organization’s records', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    await seedAgent(stranger.orgId, { name: 'broken', status: 'error' });
    const task = await createTask(stranger, { title: 'Stuck elsewhere' });
    await moveTask(stranger, task.id, 'blocked');
    await createProduct(stranger, { name: 'Their empty product' });

    // Act
    const mine = await health(owner);
    const theirs = await health(stranger);

    // Assess
    expect(mine).toMatchObject({ score: 100, failed_checks: [] });
    expect(theirs.failed_checks).toEqual(['agent_error', 'task_blocked', 'product_without_tasks']);
  });

  it('answers 401 without a credential', async () => {
    // Act
    const response = await call(systemHandler(), 'GET', '/system/health');

    // Assess
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
  });
});
