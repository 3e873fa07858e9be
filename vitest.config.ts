import { defineConfig } from 'vitest/config';

// Both projects see the same environment; only the integration project starts DynamoDB Local.
const env = {
  APP_MODE: 'local',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  VALIDATE_RESPONSES: 'true',
  // Suites send hundreds of requests per organization a minute; the rate-limit tests opt back in.
  RATE_LIMIT_TIER: 'enterprise',
  JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
  // Suites register and log in hundreds of users: a cheaper scrypt keeps that to milliseconds. The
  // default (2^17) is measured by bench/login.ts; the rehash test shows hashes rising to the configured N.
  PASSWORD_SCRYPT_LOG_N: '12',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

export default defineConfig({
  test: {
    env,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        // Pure logic and adapters against fakes: no database, so no Java process and no table.
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts'],
          globalSetup: ['tests/setup/leak-scan.global.ts'],
          setupFiles: ['tests/setup/leak-scan.ts'],
        },
      },
      {
        // One DynamoDB Local for the run; every test file gets its own table in it.
        extends: true,
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts', 'tests/e2e/**/*.test.ts'],
          globalSetup: ['tests/setup/dynamodb.global.ts', 'tests/setup/leak-scan.global.ts'],
          setupFiles: ['tests/setup/table.ts', 'tests/setup/leak-scan.ts'],
        },
      },
    ],
  },
});
