/**
 * The benchmark's smoke check alone (`npm run test:bench`, after a build): bench/run.ts --smoke end to
 * end, every server and workload once. Kept out of `npm test`, which tests the library; CI runs both.
 */
const { testTimeout, projects } = require('./jest.config.js');
const express5 = projects.find((project) => project.displayName === 'express5');

module.exports = {
  ...express5,
  displayName: 'bench',
  testTimeout,
  roots: ['<rootDir>/__tests__/bench'],
  testPathIgnorePatterns: ['/node_modules/'],
  // The bench starts the databases it runs on itself (bench/local-postgres.ts), not the test suites' cluster.
  globalSetup: undefined,
  globalTeardown: undefined,
};
