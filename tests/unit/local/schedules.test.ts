import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSchedules } from '#infra/local/schedules';
import { rateMs, readServerlessSchedules } from '#infra/local/serverless-routes';

/** The schedules npm start runs: read from serverless.yml, as the gateway reads its routes. */
describe('rateMs', () => {
  it('reads EventBridge rate expressions in minutes, hours and days, singular or plural', () => {
    expect(rateMs('rate(1 minute)')).toBe(60_000);
    expect(rateMs('rate(5 minutes)')).toBe(300_000);
    expect(rateMs('rate(2 hours)')).toBe(7_200_000);
    expect(rateMs('rate(1 day)')).toBe(86_400_000);
  });

  it('refuses cron expressions and malformed rates by name', () => {
    expect(() => rateMs('cron(0 12 * * ? *)')).toThrow('Only rate(n minutes|hours|days) schedules run locally');
    expect(() => rateMs('rate(often)')).toThrow('rate(often)');
  });
});

describe('readServerlessSchedules', () => {
  it('finds the webhook sweeper, the reconcilers and the factory pool of serverless.yml at their rates', () => {
    // Act
    const schedules = readServerlessSchedules();

    // Assess
    expect(
      schedules.map(({ fn, expression, everyMs }) => ({
        name: fn.name,
        module: fn.module,
        expression,
        everyMs,
      })),
    ).toEqual([
      {
        name: 'webhookSweeper',
        module: 'functions/schedule/webhook-sweeper',
        expression: 'rate(1 minute)',
        everyMs: 60_000,
      },
      {
        name: 'pipelineReconciler',
        module: 'functions/schedule/pipeline-reconciler',
        expression: 'rate(1 minute)',
        everyMs: 60_000,
      },
      {
        name: 'discoveryReconciler',
        module: 'functions/schedule/discovery-reconciler',
        expression: 'rate(5 minutes)',
        everyMs: 300_000,
      },
      {
        name: 'factoryPool',
        module: 'functions/schedule/factory-pool',
        expression: 'rate(1 minute)',
        everyMs: 60_000,
      },
    ]);
  });

  it('reads the object form with one or several rates, and leaves disabled schedules out', () => {
    // Prepare
    const file = join(mkdtempSync(join(tmpdir(), 'aos-sls-')), 'serverless.yml');
    writeFileSync(
      file,
      [
        'functions:',
        '  often:',
        '    handler: functions/schedule/often.handler',
        '    events:',
        '      - schedule: { rate: [rate(5 minutes), rate(1 hour)] }',
        '  off:',
        '    handler: functions/schedule/off.handler',
        '    events:',
        '      - schedule: { rate: rate(1 day), enabled: false }',
        '  web:',
        '    handler: functions/http/web.handler',
        '    events:',
        "      - httpApi: 'GET /api/web'",
      ].join('\n'),
    );

    // Act
    const schedules = readServerlessSchedules(file);

    // Assess
    expect(schedules.map(({ fn, everyMs }) => [fn.name, fn.exportName, everyMs])).toEqual([
      ['often', 'handler', 300_000],
      ['often', 'handler', 3_600_000],
    ]);
  });
});

describe('startSchedules', () => {
  it('runs a function on the interval given for it, the others on their own rate, leaving out those skipped', () => {
    // Act
    const schedules = startSchedules({ everyMsOf: { pipelineReconciler: 5_000 }, skip: ['factoryPool'] });
    schedules.stop();

    // Assess
    expect(schedules.schedules.map(({ fn, expression, everyMs }) => [fn.name, expression, everyMs])).toEqual([
      ['webhookSweeper', 'rate(1 minute)', 60_000],
      ['pipelineReconciler', 'rate(1 minute)', 5_000],
      ['discoveryReconciler', 'rate(5 minutes)', 300_000],
    ]);
  });
});
