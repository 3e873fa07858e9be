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
});
