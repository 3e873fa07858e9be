import { afterEach, describe, expect, it, vi } from 'vitest';

/** The scheduler port's composition: EventBridge when deployed, the table and timers locally. */
describe('scheduler', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('is the process-wide local scheduler in local mode', async () => {
    // Prepare
    const { scheduler } = await import('#lib/app/scheduler');
    const { localScheduler } = await import('#lib/adapters/local/table-scheduler');

    // Act / Assess
    expect(scheduler()).toBe(localScheduler());
    expect(scheduler().kind).toBe('local');
  });

  it('is one EventBridge scheduler per process in aws mode', async () => {
    // Prepare
    vi.stubEnv('APP_MODE', 'aws');
    vi.resetModules();
    const { scheduler } = await import('#lib/app/scheduler');

    // Act / Assess
    expect(scheduler().kind).toBe('eventbridge');
    expect(scheduler()).toBe(scheduler());
  });
});
