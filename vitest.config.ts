import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/setup/dynamodb.global.ts'],
    setupFiles: ['tests/setup/table.ts'],
    env: {
      APP_MODE: 'local',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      VALIDATE_RESPONSES: 'true',
      // Suites send hundreds of requests per organization a minute; the rate-limit tests opt back in.
      RATE_LIMIT_TIER: 'enterprise',
      JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
