import { afterEach, describe, expect, it, vi } from 'vitest';

/** The runner factory reads the configuration at module scope, so each case loads it afresh. */
const loadRunner = async (env: Record<string, string>) => {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  vi.resetModules();
  const { runner } = await import('#lib/app/runner');
  return runner();
};

describe('the runner factory', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('gives the local runner in local mode', async () => {
    expect((await loadRunner({ APP_MODE: 'local' })).kind).toBe('local');
  });

  it('gives the provider runner in aws mode', async () => {
    expect((await loadRunner({ APP_MODE: 'aws' })).kind).toBe('provider');
  });

  it('follows AGENT_RUNNER over the mode', async () => {
    expect((await loadRunner({ APP_MODE: 'local', AGENT_RUNNER: 'provider' })).kind).toBe('provider');
    expect((await loadRunner({ APP_MODE: 'aws', AGENT_RUNNER: 'local' })).kind).toBe('local');
  });

  it('gives the local runner the duration LOCAL_RUN_DELAY_MS sets', async () => {
    // Prepare
    const runner = await loadRunner({ APP_MODE: 'local', LOCAL_RUN_DELAY_MS: '50' });
    const started = performance.now();

    // Act
    await runner.run({
      orgId: 'org1',
      agent: { name: 'a', model: null, identity: '', soul_content: '', core_rules: '', tools: [] },
      instructions: 'Wait a little',
      input: {},
    });

    // Assess
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
  });
});
