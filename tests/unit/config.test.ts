import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '#lib/config';

describe('loadConfig', () => {
  it('gives the local defaults of design.md', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      mode: 'local',
      port: 3000,
      dataDir: '.data',
      defaultTier: 'free',
      allowedOrigins: ['http://localhost:3000', 'http://127.0.0.1:3000'],
    });
  });

  it.each(['notaurl', 'https://app.example.com/', 'ftp://files.example.com', 'https://a.example, /b'])(
    'refuses ALLOWED_ORIGINS=%s with the variable’s name',
    (value) => {
      expect(() => loadConfig({ ALLOWED_ORIGINS: value })).toThrow(/ALLOWED_ORIGINS: must be a comma-separated list/);
    },
  );

  it('derives the default allowed origins from PORT and splits a given list', () => {
    expect(loadConfig({ PORT: '4000' }).allowedOrigins).toEqual(['http://localhost:4000', 'http://127.0.0.1:4000']);
    expect(loadConfig({ ALLOWED_ORIGINS: 'https://a.example, https://b.example' }).allowedOrigins).toEqual([
      'https://a.example',
      'https://b.example',
    ]);
  });

  it('gives the local runner no delay unless LOCAL_RUN_DELAY_MS sets one, up to 15 minutes', () => {
    expect(loadConfig({}).localRunDelayMs).toBe(0);
    expect(loadConfig({ LOCAL_RUN_DELAY_MS: '1500' }).localRunDelayMs).toBe(1500);
    expect(loadConfig({ LOCAL_RUN_DELAY_MS: '900000' }).localRunDelayMs).toBe(900_000);
  });

  it.each(['-1', '1.5', '900001', 'soon', '', '1e3'])('refuses LOCAL_RUN_DELAY_MS=%j saying what it takes', (value) => {
    expect(() => loadConfig({ LOCAL_RUN_DELAY_MS: value })).toThrow(
      'Invalid configuration: LOCAL_RUN_DELAY_MS: must be a whole number of milliseconds from 0 to 900000',
    );
  });

  it('bounds each DynamoDB call at 5 s unless DYNAMODB_TIMEOUT_MS says otherwise', () => {
    expect(loadConfig({}).dynamoTimeoutMs).toBe(5_000);
    expect(loadConfig({ DYNAMODB_TIMEOUT_MS: '1000' }).dynamoTimeoutMs).toBe(1_000);
  });

  it('leaves the pipeline reconciler on its serverless.yml rate unless PIPELINE_RECONCILE_INTERVAL_SEC is set', () => {
    expect(loadConfig({}).pipelineReconcileIntervalSec).toBeUndefined();
    expect(loadConfig({ PIPELINE_RECONCILE_INTERVAL_SEC: '5' }).pipelineReconcileIntervalSec).toBe(5);
  });

  it.each(['0', '3601', '2.5', 'often'])('refuses PIPELINE_RECONCILE_INTERVAL_SEC=%j saying what it takes', (value) => {
    expect(() => loadConfig({ PIPELINE_RECONCILE_INTERVAL_SEC: value })).toThrow(
      'Invalid configuration: PIPELINE_RECONCILE_INTERVAL_SEC: must be a whole number of seconds from 1 to 3600',
    );
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ DEFAULT_TIER: 'platinum' }, 'DEFAULT_TIER'],
    [{ DYNAMODB_ENDPOINT: 'not a url' }, 'DYNAMODB_ENDPOINT'],
    [{ DYNAMODB_TIMEOUT_MS: '10000' }, 'DYNAMODB_TIMEOUT_MS'],
    [{ DYNAMODB_TIMEOUT_MS: '50' }, 'DYNAMODB_TIMEOUT_MS'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ VALIDATE_RESPONSES: 'maybe' }, 'VALIDATE_RESPONSES'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${name}:`));
  });
});
