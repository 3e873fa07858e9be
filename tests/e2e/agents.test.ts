import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/ports';
import { api, signUp, until } from '#tests/support/http-api';
import { launch, newDataDir, stopInstances, waitForOutput } from '#tests/support/instances';

/**
 * The README's agent walkthrough against `npm start`, over HTTP: a template applied, the agent created
 * on a short interval, a task assigned to it done by the local runner within a tick, tokens consumed, a
 * changelog entry; and after a restart of the service, its schedule runs again from the table.
 */

afterAll(stopInstances);

describe('an agent under npm start', () => {
  it('does its task within a tick, and ticks again after the service restarts', async () => {
    // Prepare
    const dataDir = newDataDir();
    const port = await freePort();
    const first = launch(port, dataDir);
    await waitForOutput(first, 'is running');
    const base = `http://127.0.0.1:${port}/api`;
    const token = await signUp(base, 'ada');
    const balance = async () => (await api(base, 'GET', '/tokens/balance', token)).body.data.balance as number;
    const taskStatus = async (id: number) => (await api(base, 'GET', `/tasks/${id}`, token)).body.data.status;
    const before = await balance();

    // Act
    const applied = await api(base, 'POST', '/agent-templates/qa-tester/apply', token, {
      name: 'checker',
      display_name: 'Checker',
    });
    const created = await api(base, 'POST', '/agents', token, {
      ...applied.body.data,
      interval_sec: 1,
      config: { ...applied.body.data.config, complete_to: 'done' },
    });
    const task = await api(base, 'POST', '/tasks', token, { title: 'Check the login page', assignee: 'checker' });

    // Assess
    expect(created.status).toBe(200);
    expect(created.body.data.steps.map((step: { step: string; ok: boolean }) => [step.step, step.ok])).toEqual(
      [
        'registration',
        'workspace',
        'rules',
        'run_configuration',
        'automations',
        'schedule',
        'loading',
        'heartbeat',
        'log',
      ].map((step) => [step, true]),
    );
    await until(
      () => taskStatus(task.body.data.id),
      (status) => status === 'done',
    );
    expect(await balance()).toBeLessThan(before);
    const changelog = await api(base, 'GET', '/changelog?agent=checker', token);
    expect(changelog.body.data).toEqual([expect.objectContaining({ task_id: task.body.data.id })]);

    // Act: restart the service on the same data
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    const again = launch(port, dataDir);
    await waitForOutput(again, 'is running');
    const next = await api(base, 'POST', '/tasks', token, { title: 'Check the signup page', assignee: 'checker' });

    // Assess: the schedule came back from the table
    expect(again.output()).toContain('Agent schedules 1 running');
    await until(
      () => taskStatus(next.body.data.id),
      (status) => status === 'done',
    );
    // Two starts of npm start and two ticks: well within a minute even on a busy machine.
  }, 120_000);
});
