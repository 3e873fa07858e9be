import { beforeAll, describe, expect, it } from 'vitest';
import { discoveryEnginesHandler } from '#functions/http/discovery-engines';
import { discoveryReconcilerHandler } from '#functions/schedule/discovery-reconciler';
import { discoveryRunHandler } from '#functions/schedule/discovery-run';
import { fixedClock } from '#lib/kernel/clock';
import type { AgentRunner, MessageQueue, Scheduler } from '#lib/kernel/ports';
import { activityOf } from '#tests/support/activity';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';
import { recordingScheduler } from '#tests/support/scheduler';

/**
 * Discovery engines' records and schedules against DynamoDB Local with a recording scheduler: creation,
 * changes and deletion keep the schedule in line with the record, a failed scheduler call leaves a state
 * the next PATCH or the reconciler repairs, validation, 404s, 409s and tenancy.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps every other
  // user an ordinary one.
  await newUser('instanceadmin');
});

/** Time stands still (tokens stay valid for the file's run); the reconciler's tests move their own clock. */
const clock = fixedClock(new Date(Math.floor(Date.now() / 1000) * 1000));
const NOW = clock.now().toISOString();

/** No test here runs an engine: a queue that would say so if one tried. */
const noQueue: MessageQueue = {
  send: async () => {
    throw new Error('no run is queued in these tests');
  },
};

/** Nor is any engine run by a schedule here: a runner that would say so. */
const noRunner: AgentRunner = {
  kind: 'local',
  run: async () => {
    throw new Error('no engine is run in these tests');
  },
};

const api = (scheduler: Scheduler = recordingScheduler()) =>
  discoveryEnginesHandler({ ports: { scheduler, queue: noQueue, clock } });

type Api = ReturnType<typeof api>;

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function createEngine(handler: Api, user: TestUser, body: Record<string, unknown>) {
  const response = await call(handler, 'POST', '/discovery-engines', as(user, { body }));
  if (response.status !== 201) throw new Error(`create failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; slug: string; schedule: { name: string; in_sync: boolean } };
}

const scheduleName = (user: TestUser, id: number) => `discovery-${user.orgId}-${id}`;

/** Schema problems say `The request is not valid`; the domain's own (a reserved slug) say what they are. */
const invalid = (path: string) => ({
  error: {
    code: 'VALIDATION_ERROR',
    message: expect.any(String),
    details: [{ path, message: expect.any(String) }],
  },
});

const notFound = { error: { code: 'NOT_FOUND', message: 'Discovery engine not found', details: [] } };

const zeroStats = {
  runs: 0,
  succeeded: 0,
  failed: 0,
  empty: 0,
  findings: 0,
  tokens_used: 0,
  cost_usd: 0,
  compute_minutes: 0,
  last_run_at: null,
  last_run_status: null,
};

describe('POST /discovery-engines', () => {
  it('creates an engine with a slug from its name and defaults, and puts its hourly schedule', async () => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();
    const handler = api(scheduler);

    // Act
    const response = await call(
      handler,
      'POST',
      '/discovery-engines',
      as(owner, { body: { name: '  Market Scan: EU  ', layer: ' market ' } }),
    );
    const fetched = await call(handler, 'GET', '/discovery-engines/market-scan-eu', as(owner));

    // Assess
    expect(response.status).toBe(201);
    const id = response.body.data.id;
    expect(response.body).toEqual({
      data: {
        id: expect.any(Number),
        slug: 'market-scan-eu',
        name: 'Market Scan: EU',
        layer: 'market',
        description: null,
        model: null,
        schedule_interval_ms: 3_600_000,
        enabled: true,
        schedule: {
          name: scheduleName(owner, id),
          in_sync: true,
          expression: 'rate(3600 seconds)',
          enabled: true,
          interval_sec: 3600,
          note: null,
          error: null,
        },
        stats: zeroStats,
        created_at: NOW,
        updated_at: NOW,
      },
    });
    expect(scheduler.calls).toEqual([
      {
        op: 'put',
        spec: {
          name: scheduleName(owner, id),
          target: 'discovery-run',
          payload: { org_id: owner.orgId, engine_id: id, slug: 'market-scan-eu' },
          intervalSec: 3600,
          enabled: true,
        },
      },
    ]);
    expect(fetched.status).toBe(200);
    expect(fetched.body.data).toEqual({ ...response.body.data, recent_runs: [] });
    expect(JSON.stringify(fetched.body)).not.toMatch(/"pk"|"sk"|gsi1|schedule_synced_version|"version"/);
    const entries = await activityOf(owner.orgId);
    expect(entries.map((entry) => [entry.action, entry.entity_id])).toContainEqual([
      'discovery_engine.created',
      'market-scan-eu',
    ]);
  });

  it('takes a slug, model and description, and puts a disabled schedule rounded up to whole seconds', async () => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();

    // Act
    const created = await createEngine(api(scheduler), owner, {
      name: 'Codebase watch',
      layer: 'codebase / dependencies',
      slug: 'deps',
      description: 'New advisories in our dependencies',
      model: 'small-model',
      schedule_interval_ms: 90_500,
      enabled: false,
    });

    // Assess
    expect(created).toMatchObject({
      slug: 'deps',
      layer: 'codebase / dependencies',
      description: 'New advisories in our dependencies',
      model: 'small-model',
      schedule_interval_ms: 90_500,
      enabled: false,
      schedule: { in_sync: true, enabled: false, interval_sec: 91, expression: 'rate(91 seconds)' },
    });
    expect(scheduler.schedules.get(scheduleName(owner, created.id))?.spec).toMatchObject({
      intervalSec: 91,
      enabled: false,
    });
  });

  it('suffixes -2, -3 … to a generated slug that is taken, and never generates `efficiency`', async () => {
    // Prepare
    const owner = await newUser('owner');
    const handler = api();
    await createEngine(handler, owner, { name: 'Scan', layer: 'market' });

    // Act
    const second = await createEngine(handler, owner, { name: 'SCAN!', layer: 'market' });
    const third = await createEngine(handler, owner, { name: ' scan ', layer: 'market' });
    const efficiency = await createEngine(handler, owner, { name: 'Efficiency', layer: 'ops' });

    // Assess
    expect([second.slug, third.slug, efficiency.slug]).toEqual(['scan-2', 'scan-3', 'efficiency-2']);
  });

  it('answers 409 for an explicit slug that exists, and neither writes nor schedules anything', async () => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();
    const handler = api(scheduler);
    await createEngine(handler, owner, { name: 'First', layer: 'market', slug: 'radar' });

    // Act
    const response = await call(
      handler,
      'POST',
      '/discovery-engines',
      as(owner, { body: { name: 'Second', layer: 'ops', slug: 'radar' } }),
    );
    const list = await call(handler, 'GET', '/discovery-engines', as(owner));

    // Assess
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: {
        code: 'CONFLICT',
        message: 'A discovery engine with this slug exists',
        details: [{ path: 'body.slug', message: 'is taken' }],
      },
    });
    expect(list.body.data.map((engine: { name: string }) => engine.name)).toEqual(['First']);
    expect(scheduler.calls.filter((entry) => entry.op === 'put')).toHaveLength(1);
  });

  it.each([
    ['name missing', { layer: 'market' }, 'body.name'],
    ['layer missing', { name: 'Scan' }, 'body.layer'],
    ['name blank', { name: '   ', layer: 'market' }, 'body.name'],
    ['layer blank', { name: 'Scan', layer: '  ' }, 'body.layer'],
    ['layer of 65 characters', { name: 'Scan', layer: 'x'.repeat(65) }, 'body.layer'],
    ['layer not a string', { name: 'Scan', layer: 7 }, 'body.layer'],
    ['slug with an underscore', { name: 'Scan', layer: 'market', slug: 'bad_slug' }, 'body.slug'],
    ['slug with a double hyphen', { name: 'Scan', layer: 'market', slug: 'a--b' }, 'body.slug'],
    ['slug `efficiency`', { name: 'Scan', layer: 'market', slug: 'efficiency' }, 'body.slug'],
    [
      'interval below a second',
      { name: 'Scan', layer: 'market', schedule_interval_ms: 999 },
      'body.schedule_interval_ms',
    ],
    [
      'interval over seven days',
      { name: 'Scan', layer: 'market', schedule_interval_ms: 604_800_001 },
      'body.schedule_interval_ms',
    ],
    [
      'interval not whole',
      { name: 'Scan', layer: 'market', schedule_interval_ms: 1500.5 },
      'body.schedule_interval_ms',
    ],
    [
      'interval a string',
      { name: 'Scan', layer: 'market', schedule_interval_ms: '60000' },
      'body.schedule_interval_ms',
    ],
    ['enabled a string', { name: 'Scan', layer: 'market', enabled: 'yes' }, 'body.enabled'],
    ['a name with nothing to make a slug from', { name: '!!!', layer: 'market' }, 'body.slug'],
  ])('answers 400 for %s, naming the field, and schedules nothing', async (_case, body, path) => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();

    // Act
    const response = await call(api(scheduler), 'POST', '/discovery-engines', as(owner, { body }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(path));
    expect(scheduler.calls).toEqual([]);
  });

  it('accepts the interval bounds, a layer of 64 characters, and answers 401 without a credential', async () => {
    // Prepare
    const owner = await newUser('owner');
    const handler = api();

    // Act
    const shortest = await createEngine(handler, owner, {
      name: 'A',
      layer: 'x'.repeat(64),
      schedule_interval_ms: 1_000,
    });
    const longest = await createEngine(handler, owner, { name: 'B', layer: 'y', schedule_interval_ms: 604_800_000 });
    const anonymous = await call(handler, 'POST', '/discovery-engines', { body: { name: 'C', layer: 'z' } });

    // Assess
    expect(shortest.schedule).toMatchObject({ interval_sec: 1, in_sync: true });
    expect(longest.schedule).toMatchObject({ interval_sec: 604_800, in_sync: true });
    expect(anonymous.status).toBe(401);
  });

  it('writes the engine when the scheduler fails, says so, and the next PATCH puts the schedule', async () => {
    // Prepare
    const owner = await newUser('owner');
    const down = recordingScheduler({ failing: ['put'], message: 'scheduler throttled' });
    const up = recordingScheduler();

    // Act
    const created = await call(
      api(down),
      'POST',
      '/discovery-engines',
      as(owner, { body: { name: 'Flaky', layer: 'ops' } }),
    );
    const meanwhile = await call(api(up), 'GET', '/discovery-engines/flaky', as(owner));
    const repaired = await call(api(up), 'PATCH', '/discovery-engines/flaky', as(owner, { body: {} }));
    const again = await call(api(up), 'PATCH', '/discovery-engines/flaky', as(owner, { body: {} }));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data.schedule).toEqual({
      name: scheduleName(owner, created.body.data.id),
      in_sync: false,
      expression: null,
      enabled: null,
      interval_sec: null,
      note: null,
      error: 'scheduler throttled',
    });
    expect(meanwhile.body.data.schedule).toMatchObject({ in_sync: false, error: 'scheduler throttled' });
    expect(repaired.status).toBe(200);
    expect(repaired.body.data.schedule).toMatchObject({ in_sync: true, error: null, interval_sec: 3600 });
    expect(repaired.body.data.updated_at).toBe(created.body.data.updated_at);
    expect(up.calls.map((entry) => entry.op)).toEqual(['put']);
    expect(again.body.data.schedule.in_sync).toBe(true);
  });
});

describe('PATCH /discovery-engines/{slug}', () => {
  it('puts the schedule again when the interval changes, and when the engine is disabled and enabled', async () => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();
    const handler = api(scheduler);
    const created = await createEngine(handler, owner, { name: 'Radar', layer: 'market' });
    const name = scheduleName(owner, created.id);

    // Act
    const slower = await call(
      handler,
      'PATCH',
      '/discovery-engines/radar',
      as(owner, { body: { schedule_interval_ms: 7_200_000 } }),
    );
    const disabled = await call(handler, 'PATCH', '/discovery-engines/radar', as(owner, { body: { enabled: false } }));
    const enabled = await call(handler, 'PATCH', '/discovery-engines/radar', as(owner, { body: { enabled: true } }));

    // Assess
    expect(slower.status).toBe(200);
    expect(slower.body.data).toMatchObject({
      schedule_interval_ms: 7_200_000,
      schedule: { in_sync: true, interval_sec: 7200, enabled: true },
    });
    expect(disabled.body.data).toMatchObject({ enabled: false, schedule: { in_sync: true, enabled: false } });
    expect(enabled.body.data).toMatchObject({ enabled: true, schedule: { in_sync: true, enabled: true } });
    const puts = scheduler.callsFor(name).map((entry) => (entry.op === 'put' ? entry.spec : entry));
    expect(puts).toEqual([
      expect.objectContaining({ intervalSec: 3600, enabled: true }),
      expect.objectContaining({ intervalSec: 7200, enabled: true }),
      expect.objectContaining({ intervalSec: 7200, enabled: false }),
      expect.objectContaining({ intervalSec: 7200, enabled: true }),
    ]);
    expect(scheduler.schedules.get(name)).toMatchObject({ enabled: true, intervalSec: 7200 });
  });

  it('changes other fields without the scheduler; a PATCH that changes nothing writes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();
    const handler = api(scheduler);
    await createEngine(handler, owner, { name: 'Radar', layer: 'market', model: 'big' });
    const later = new Date(clock.now().getTime() + 5_000);
    const laterApi = discoveryEnginesHandler({ ports: { scheduler, queue: noQueue, clock: fixedClock(later) } });

    // Act
    const renamed = await call(
      laterApi,
      'PATCH',
      '/discovery-engines/radar',
      as(owner, { body: { name: 'Radar 2', layer: 'competitors', description: 'Who shipped what', model: null } }),
    );
    const unchanged = await call(
      api(scheduler),
      'PATCH',
      '/discovery-engines/radar',
      as(owner, { body: { name: 'Radar 2', slug: 'ignored' } }),
    );

    // Assess
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      slug: 'radar',
      name: 'Radar 2',
      layer: 'competitors',
      description: 'Who shipped what',
      model: null,
      updated_at: later.toISOString(),
      schedule: { in_sync: true },
    });
    expect(unchanged.body.data).toEqual(renamed.body.data);
    expect(scheduler.calls.map((entry) => entry.op)).toEqual(['put']);
    const updates = (await activityOf(owner.orgId)).filter((entry) => entry.action === 'discovery_engine.updated');
    expect(updates.map((entry) => (entry.metadata as { changed: string[] }).changed)).toEqual([
      ['name', 'layer', 'description', 'model'],
    ]);
  });

  it('ends with the record’s schedule when an older change reaches the scheduler after a newer one', async () => {
    // Prepare: the put of the first change (disabling) is held until a second change (the interval) has
    // been written and put, so that the older put lands last.
    const owner = await newUser('owner');
    const recording = recordingScheduler();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reached = () => {};
    const heldPut = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let held = false;
    const gated: Scheduler = {
      ...recording,
      put: async (spec) => {
        if (!held && !spec.enabled) {
          held = true;
          reached();
          await gate;
        }
        return recording.put(spec);
      },
    };
    const handler = api(gated);
    const created = await createEngine(handler, owner, { name: 'Race', layer: 'ops' });
    const name = scheduleName(owner, created.id);

    // Act
    const disabling = call(handler, 'PATCH', '/discovery-engines/race', as(owner, { body: { enabled: false } }));
    await heldPut;
    const slower = await call(
      handler,
      'PATCH',
      '/discovery-engines/race',
      as(owner, { body: { schedule_interval_ms: 120_000 } }),
    );
    release();
    const disabled = await disabling;
    const final = await call(handler, 'GET', '/discovery-engines/race', as(owner));

    // Assess
    expect([slower.status, disabled.status]).toEqual([200, 200]);
    expect(final.body.data).toMatchObject({
      enabled: false,
      schedule_interval_ms: 120_000,
      schedule: { in_sync: true, enabled: false, interval_sec: 120 },
    });
    const puts = recording.callsFor(name).map((entry) => (entry.op === 'put' ? entry.spec : entry));
    // The held put (the first change's version) landed after the second's, and was put over again.
    expect(puts.slice(1)).toEqual([
      expect.objectContaining({ intervalSec: 120, enabled: false }),
      expect.objectContaining({ intervalSec: 3600, enabled: false }),
      expect.objectContaining({ intervalSec: 120, enabled: false }),
    ]);
    expect(recording.schedules.get(name)).toMatchObject({ enabled: false, intervalSec: 120 });
  });

  it('answers 404 for an unknown slug and 400 for a bad interval, without calling the scheduler', async () => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();
    const handler = api(scheduler);
    await createEngine(handler, owner, { name: 'Radar', layer: 'market' });

    // Act
    const unknown = await call(handler, 'PATCH', '/discovery-engines/nope', as(owner, { body: { enabled: false } }));
    const tooOften = await call(
      handler,
      'PATCH',
      '/discovery-engines/radar',
      as(owner, { body: { schedule_interval_ms: 10 } }),
    );
    const badSlug = await call(handler, 'PATCH', '/discovery-engines/Not_A_Slug', as(owner, { body: {} }));
    const emptyLayer = await call(handler, 'PATCH', '/discovery-engines/radar', as(owner, { body: { layer: '' } }));

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(notFound);
    expect(tooOften.status).toBe(400);
    expect(tooOften.body).toEqual(invalid('body.schedule_interval_ms'));
    expect(badSlug.status).toBe(400);
    expect(badSlug.body).toEqual(invalid('params.slug'));
    expect(emptyLayer.body).toEqual(invalid('body.layer'));
    expect(scheduler.calls.map((entry) => entry.op)).toEqual(['put']);
  });
});

describe('DELETE /discovery-engines/{slug}', () => {
  it('deletes the engine, removes its schedule and frees the slug for a new engine with its own schedule', async () => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();
    const handler = api(scheduler);
    const first = await createEngine(handler, owner, { name: 'Radar', layer: 'market' });

    // Act
    const deleted = await call(handler, 'DELETE', '/discovery-engines/radar', as(owner));
    const gone = await call(handler, 'GET', '/discovery-engines/radar', as(owner));
    const again = await call(handler, 'DELETE', '/discovery-engines/radar', as(owner));
    const second = await createEngine(handler, owner, { name: 'Radar', layer: 'market' });

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({
      data: expect.objectContaining({ id: first.id, slug: 'radar' }),
      meta: { deleted: true, schedule_removed: true, schedule_error: null },
    });
    expect(scheduler.callsFor(scheduleName(owner, first.id)).map((entry) => entry.op)).toEqual(['put', 'remove']);
    expect(scheduler.schedules.has(scheduleName(owner, first.id))).toBe(false);
    expect(gone.status).toBe(404);
    expect(again.status).toBe(404);
    expect(again.body).toEqual(notFound);
    expect(second.slug).toBe('radar');
    expect(second.id).not.toBe(first.id);
    expect(scheduler.schedules.has(scheduleName(owner, second.id))).toBe(true);
    const actions = (await activityOf(owner.orgId)).map((entry) => entry.action);
    expect(actions).toContain('discovery_engine.deleted');
  });

  it('says when the schedule could not be removed; its next run finds no engine and removes it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const scheduler = recordingScheduler();
    const created = await createEngine(api(scheduler), owner, { name: 'Radar', layer: 'market' });
    const name = scheduleName(owner, created.id);
    const payload = scheduler.schedules.get(name)?.spec.payload;
    const stuck = recordingScheduler({ failing: ['remove'], message: 'scheduler unavailable' });

    // Act
    const deleted = await call(api(stuck), 'DELETE', '/discovery-engines/radar', as(owner));
    const outcome = await discoveryRunHandler({ scheduler, clock, runner: noRunner })(payload);

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body.meta).toEqual({
      deleted: true,
      schedule_removed: false,
      schedule_error: 'scheduler unavailable',
    });
    expect(outcome).toEqual({ outcome: 'skipped', reason: 'unknown_engine' });
    expect(scheduler.callsFor(name).map((entry) => entry.op)).toEqual(['put', 'remove']);
    expect(scheduler.schedules.has(name)).toBe(false);
  });
});

describe('the discovery reconciler', () => {
  it('puts the schedules a failed scheduler call left out of sync, once they are a minute old', async () => {
    // Prepare
    const owner = await newUser('owner');
    const down = recordingScheduler({ failing: ['put'] });
    await createEngine(api(down), owner, { name: 'Flaky', layer: 'ops', schedule_interval_ms: 120_000 });
    const up = recordingScheduler();
    const soon = fixedClock(new Date(clock.now().getTime() + 30_000));
    const later = fixedClock(new Date(clock.now().getTime() + 61_000));

    // Act
    const early = await discoveryReconcilerHandler({ ports: { scheduler: up, clock: soon }, orgId: owner.orgId })();
    const report = await discoveryReconcilerHandler({ ports: { scheduler: up, clock: later }, orgId: owner.orgId })();
    const after = await call(api(up), 'GET', '/discovery-engines/flaky', as(owner));
    const quiet = await discoveryReconcilerHandler({ ports: { scheduler: up, clock: later }, orgId: owner.orgId })();

    // Assess
    expect(early.schedules).toEqual({ found: 0, synced: 0 });
    expect(report.schedules).toEqual({ found: 1, synced: 1 });
    expect(after.body.data.schedule).toMatchObject({ in_sync: true, interval_sec: 120, error: null });
    expect(up.calls).toEqual([{ op: 'put', spec: expect.objectContaining({ intervalSec: 120, enabled: true }) }]);
    expect(quiet.schedules).toEqual({ found: 0, synced: 0 });
  });
});

describe('tenancy', () => {
  it('answers 404 for another organization’s engine, lists only the caller’s; slugs are per tenant', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    const scheduler = recordingScheduler();
    const handler = api(scheduler);
    await createEngine(handler, owner, { name: 'Radar', layer: 'market' });

    // Act
    const read = await call(handler, 'GET', '/discovery-engines/radar', as(stranger));
    const patched = await call(
      handler,
      'PATCH',
      '/discovery-engines/radar',
      as(stranger, { body: { enabled: false } }),
    );
    const deleted = await call(handler, 'DELETE', '/discovery-engines/radar', as(stranger));
    const run = await call(handler, 'POST', '/discovery-engines/radar/run', as(stranger));
    const list = await call(handler, 'GET', '/discovery-engines', as(stranger));
    const efficiency = await call(handler, 'GET', '/discovery-engines/efficiency', as(stranger));
    const own = await createEngine(handler, stranger, { name: 'Radar', layer: 'ops' });
    const ownerView = await call(handler, 'GET', '/discovery-engines/radar', as(owner));

    // Assess
    for (const response of [read, patched, deleted, run]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual(notFound);
    }
    expect(list.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(efficiency.body.data.engines).toEqual([]);
    expect(own.slug).toBe('radar');
    expect(ownerView.body.data).toMatchObject({ layer: 'market', enabled: true });
    expect(scheduler.calls.filter((entry) => entry.op !== 'put')).toEqual([]);
  });
});

describe('GET /discovery-engines', () => {
  it('lists the engines oldest first, with paging', async () => {
    // Prepare
    const owner = await newUser('owner');
    const handler = api();
    for (const name of ['One', 'Two', 'Three']) await createEngine(handler, owner, { name, layer: 'market' });

    // Act
    const all = await call(handler, 'GET', '/discovery-engines', as(owner));
    const page = await call(handler, 'GET', '/discovery-engines', as(owner, { query: { limit: '1', offset: '1' } }));
    const badLimit = await call(handler, 'GET', '/discovery-engines', as(owner, { query: { limit: '-1' } }));

    // Assess
    expect(all.body.data.map((engine: { slug: string }) => engine.slug)).toEqual(['one', 'two', 'three']);
    expect(all.body.meta).toEqual({ total: 3, limit: 50, offset: 0 });
    expect(all.body.data[0].stats).toEqual(zeroStats);
    expect(page.body.data.map((engine: { slug: string }) => engine.slug)).toEqual(['two']);
    expect(page.body.meta).toEqual({ total: 3, limit: 1, offset: 1 });
    expect(badLimit.status).toBe(400);
  });
});
