import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { agentTemplatesHandler } from '#functions/http/agent-templates';
import { agentsHandler } from '#functions/http/agents';
import { tasksHandler } from '#functions/http/tasks';
import { handler as tokens } from '#functions/http/tokens';
import { agentTickHandler } from '#functions/schedule/agent-tick';
import { localRunner } from '#lib/adapters/local/local-runner';
import { tableScheduler } from '#lib/adapters/local/table-scheduler';
import { call, newUser, type TestUser } from '#tests/support/identity';
import { testQueue } from '#tests/support/queues';

/**
 * An agent's life as `npm start` runs it: the local scheduler (schedules in the table, timers) drives
 * the agent-tick handler with the deterministic local runner, on an interval of one second.
 */

const scheduler = tableScheduler({ partition: `SCHEDULE#lifecycle-${randomUUID()}` });
const tick = agentTickHandler({ runner: localRunner(), queue: testQueue });
const ticks: Array<{ agent_id: number; outcome: string }> = [];
await scheduler.connect(async (_target, payload) => {
  const outcome = await tick(payload);
  ticks.push({ agent_id: Number(payload.agent_id), outcome: outcome.outcome });
});
afterAll(() => scheduler.close());

const agents = agentsHandler({ ports: { scheduler } });
const templates = agentTemplatesHandler();
const tasks = tasksHandler({ ports: { queue: testQueue } });

const as = (user: TestUser, body?: unknown) => ({ token: user.token, ...(body === undefined ? {} : { body }) });

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not reached; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const taskOf = async (user: TestUser, id: number) => (await call(tasks, 'GET', `/tasks/${id}`, as(user))).body.data;
const balanceOf = async (user: TestUser): Promise<number> =>
  (await call(tokens, 'GET', '/tokens/balance', as(user))).body.data.balance;
const ticksOf = (agentId: number) => ticks.filter((entry) => entry.agent_id === agentId).length;

async function createTask(user: TestUser, title: string, assignee: string): Promise<number> {
  const response = await call(tasks, 'POST', '/tasks', as(user, { title, assignee }));
  if (response.status !== 201) throw new Error(JSON.stringify(response.body));
  return response.body.data.id;
}

describe('an agent applied from a template, on the local scheduler', () => {
  it('runs its task within a tick, stops ticking when stopped, and runs again after start and restart', async () => {
    // Prepare: apply a template and create the agent from the answer as it is, on a 1 s interval
    const owner = await newUser('life');
    const applied = await call(
      templates,
      'POST',
      '/agent-templates/full-stack-dev/apply',
      as(owner, { name: 'shipper', display_name: 'Shipper' }),
    );
    expect(applied.status).toBe(200);
    const body = {
      ...applied.body.data,
      interval_sec: 1,
      config: { ...applied.body.data.config, complete_to: 'done' },
    };
    const balanceBefore = await balanceOf(owner);

    // Act: create, and give it a task
    const created = await call(agents, 'POST', '/agents', as(owner, body));
    const agentId: number = created.body.data.agent.id;
    const first = await createTask(owner, 'Write the release notes', 'shipper');

    // Assess: every bootstrap step succeeded; the task is done by a tick, its tokens consumed
    expect(created.status).toBe(200);
    expect(created.body.data.steps.every((step: { ok: boolean }) => step.ok)).toBe(true);
    expect(created.body.data.agent.schedule).toMatchObject({ expression: 'rate(1 second)', enabled: true });
    expect(created.body.data.agent.schedule.next_runs).toHaveLength(3);
    const done = await until(
      () => taskOf(owner, first),
      (task) => task.status === 'done',
    );
    expect(done.last_run).toMatchObject({ agent: 'shipper', status: 'succeeded', model: 'local-deterministic' });
    expect(await balanceOf(owner)).toBe(balanceBefore - done.last_run.usage.total_tokens);

    // Act: stop
    const stopped = await call(agents, 'POST', '/agents/shipper/stop', as(owner, { note: 'maintenance' }));
    const ticksAtStop = ticksOf(agentId);
    const held = await createTask(owner, 'Wait for the restart', 'shipper');

    // Assess: stopped, the schedule disabled, and no tick for three intervals
    expect(stopped.status).toBe(200);
    expect(stopped.body.data).toMatchObject({ status: 'stopped', schedule: { enabled: false, next_runs: [] } });
    // Absence takes a window to show: three intervals, ended early only by a second tick (a failure);
    // a tick already under way at the stop may still finish.
    const quiet = Date.now() + 3_000;
    await until(
      async () => ticksOf(agentId),
      (count) => count > ticksAtStop + 1 || Date.now() > quiet,
    );
    expect(ticksOf(agentId)).toBeLessThanOrEqual(ticksAtStop + 1);
    expect((await taskOf(owner, held)).status).toBe('todo');

    // Act: start
    const started = await call(agents, 'POST', '/agents/shipper/start', as(owner));

    // Assess: ticking again, the held task gets done
    expect(started.body.data).toMatchObject({ status: 'idle', schedule: { enabled: true } });
    await until(
      () => taskOf(owner, held),
      (task) => task.status === 'done',
    );

    // Act: restart
    const restarted = await call(agents, 'POST', '/agents/shipper/restart', as(owner, { note: 'new rules' }));
    const last = await createTask(owner, 'After the restart', 'shipper');

    // Assess
    expect(restarted.body.data).toMatchObject({ status: 'idle', schedule: { enabled: true } });
    await until(
      () => taskOf(owner, last),
      (task) => task.status === 'done',
    );
    const listed = await call(agents, 'GET', '/agents', as(owner));
    expect(listed.body.data[0]).toMatchObject({ name: 'shipper', tasks_completed: 3, completion_rate: 1 });
  });
});
