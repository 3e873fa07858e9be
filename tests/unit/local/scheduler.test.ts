import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scheduleDispatch } from '#infra/local/scheduler';
import { readServerlessFunctions } from '#infra/local/serverless-routes';
import { SCHEDULE_TARGET_FUNCTIONS } from '#lib/app/schedule-targets';

/** How npm start runs a stored schedule: its target's function, found in serverless.yml by name. */
describe('SCHEDULE_TARGET_FUNCTIONS', () => {
  it('names, for every target, a function serverless.yml declares', () => {
    // Prepare
    const functions = new Map(readServerlessFunctions().map((fn) => [fn.name, fn]));

    // Act / Assess
    for (const name of Object.values(SCHEDULE_TARGET_FUNCTIONS)) expect(functions.has(name)).toBe(true);
    expect(functions.get(SCHEDULE_TARGET_FUNCTIONS['agent-tick'])?.module).toBe('functions/schedule/agent-tick');
    expect(functions.get(SCHEDULE_TARGET_FUNCTIONS['discovery-run'])?.module).toBe('functions/schedule/discovery-run');
  });
});

/** A serverless.yml in a directory of its own; `agentTick`'s handler records its events there. */
function project(declareTick: boolean): { file: string; events: () => unknown[] } {
  const dir = mkdtempSync(join(tmpdir(), 'aos-sls-'));
  const key = `events_${dir.replace(/\W/g, '_')}`;
  writeFileSync(
    join(dir, 'tick.ts'),
    `export async function handler(event: unknown) {\n` +
      `  const store = globalThis as Record<string, unknown[] | undefined>;\n` +
      `  (store['${key}'] ??= []).push(event);\n` +
      `  return { ok: true };\n}\n`,
  );
  const functions = declareTick
    ? ['  agentTick:', `    handler: ${join(dir, 'tick')}.handler`]
    : ['  other:', `    handler: ${join(dir, 'tick')}.handler`];
  const file = join(dir, 'serverless.yml');
  writeFileSync(file, ['functions:', ...functions].join('\n'));
  return { file, events: () => (globalThis as unknown as Record<string, unknown[] | undefined>)[key] ?? [] };
}

describe('scheduleDispatch', () => {
  it("calls the target function's handler with the schedule's payload as its event", async () => {
    // Prepare
    const { file, events } = project(true);
    const dispatch = scheduleDispatch({ serverlessFile: file });

    // Act
    const first = await dispatch('agent-tick', { org_id: 'o_1', agent_id: 1 });
    await dispatch('agent-tick', { org_id: 'o_1', agent_id: 2 });

    // Assess
    expect(first).toEqual({ ok: true });
    expect(events()).toEqual([
      { org_id: 'o_1', agent_id: 1 },
      { org_id: 'o_1', agent_id: 2 },
    ]);
  });

  it('says once, by name, that a target has no function in serverless.yml', async () => {
    // Prepare
    const { file, events } = project(false);
    const said: string[] = [];
    const dispatch = scheduleDispatch({ serverlessFile: file, onMissing: (message) => said.push(message) });

    // Act
    await dispatch('agent-tick', { org_id: 'o_1', agent_id: 1 });
    await dispatch('agent-tick', { org_id: 'o_1', agent_id: 1 });

    // Assess
    expect(said).toEqual(['Schedules of agent-tick do not run: serverless.yml declares no function agentTick']);
    expect(events()).toEqual([]);
  });
});
