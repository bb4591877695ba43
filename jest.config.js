/**
 * Jest runs the suites as CommonJS through ts-jest (transpile only; `npm run typecheck` checks types).
 * Two projects: every suite on Express (Nest's default platform), and the dashboard's browser suites
 * once more on Fastify (DURABLE_TEST_PLATFORM, read by startApp), so the UI is tested on both.
 * browser.e2e-spec.ts runs both platforms itself.
 */
const shared = {
  rootDir: '.',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleNameMapper: {
    '^nestjs-durable$': '<rootDir>/libs/durable/src',
    '^nestjs-durable/(.*)$': '<rootDir>/libs/durable/src/$1',
  },
};

module.exports = {
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  reporters: ['default', '<rootDir>/test/setup/summary-reporter.js'],
  testTimeout: 30_000,
  maxWorkers: 2,
  projects: [
    { ...shared, displayName: 'express', testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'] },
    {
      ...shared,
      displayName: 'fastify',
      testMatch: ['<rootDir>/test/dashboard/*.browser.e2e-spec.ts'],
      setupFiles: ['<rootDir>/test/setup/fastify-platform.js'],
    },
  ],
};
