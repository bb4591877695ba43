/** Jest runs the suites as CommonJS through ts-jest (transpile only; `npm run typecheck` checks types). */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleNameMapper: {
    '^nestjs-durable$': '<rootDir>/libs/durable/src',
    '^nestjs-durable/(.*)$': '<rootDir>/libs/durable/src/$1',
  },
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  reporters: ['default', '<rootDir>/test/setup/summary-reporter.js'],
  testTimeout: 30_000,
  maxWorkers: 2,
};
