/**
 * Jest runs the TypeScript sources through SWC (CommonJS, types stripped). Every HTTP test runs twice: once on
 * Express 5 and once on Express 4 (the `express4` alias replaces `express` for app and library).
 * The guarantee suites run a third time on Express 5 through a task store with 1-5 ms of latency,
 * a fourth on the Redis task store, and a fifth on the PostgreSQL task store.
 */
const base = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  // The benchmark's smoke check (real server processes under load, ~50 s of CPU) checks the bench
  // tooling, not the library: `npm run test:bench` (jest.bench.config.js) runs it, and so does CI.
  testPathIgnorePatterns: ['/node_modules/', '/__tests__/bench/'],
  // One throwaway PostgreSQL cluster for the run instead of one per file (see helpers/postgres.ts);
  // listed in every project so that any selection of projects starts it, once.
  globalSetup: '<rootDir>/__tests__/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/__tests__/helpers/global-teardown.ts',
  // SWC strips the types (the typecheck is `tsc --noEmit`, before jest in `npm test`): ~10x cheaper
  // than ts-jest per file, and its cache key does not depend on the project, so the five projects
  // share one transformed copy of each file instead of five.
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
  // Sources use NodeNext-style '.js' specifiers; map them back to the .ts files.
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^a2a-express-kit$': '<rootDir>/lib/index.ts',
    '^a2a-express-kit/testing$': '<rootDir>/lib/testing/index.ts',
    '^a2a-express-kit/sqlite$': '<rootDir>/lib/sqlite.ts',
    '^a2a-express-kit/redis$': '<rootDir>/lib/redis.ts',
    '^a2a-express-kit/postgres$': '<rootDir>/lib/postgres.ts',
  },
};

module.exports = {
  testTimeout: 30000,
  // Two workers even on two cores (jest's default there is one): most suites wait on sockets, child
  // processes and redis-server, not on the CPU. The whole run takes about half as long.
  maxWorkers: 2,
  projects: [
    { ...base, displayName: 'express5', globals: { EXPRESS_MAJOR: 5 } },
    {
      ...base,
      displayName: 'express4',
      globals: { EXPRESS_MAJOR: 4 },
      moduleNameMapper: { ...base.moduleNameMapper, '^express$': 'express4' },
      // Express-independent suites run once, in the express5 project; so do the fuzz suite (~15 s a
      // run), the stores' suites, the multi-process replica suites and the push suites, and the
      // acceptance suites that run an example in a child process (which loads Express 5 whatever the
      // project maps).
      testPathIgnorePatterns: [
        ...base.testPathIgnorePatterns,
        '/__tests__/unit/',
        '/__tests__/docs/',
        '/__tests__/package/',
        '/__tests__/contract/',
        '/__tests__/fuzz/',
        '/__tests__/stores/',
        '/__tests__/replicas/',
        '/__tests__/push/',
        '/__tests__/acceptance/example-shutdown',
        '/__tests__/acceptance/replicas-example',
        // Engine-only guarantees (the races and push delivery never see Express): the latency, Redis
        // and PostgreSQL projects repeat them where they can differ.
        '/__tests__/guarantees/races',
        '/__tests__/guarantees/push',
      ],
    },
    {
      // The guarantee suites again, through a store that takes 1-5 ms per call (see helpers/fixtures).
      ...base,
      displayName: 'latency',
      roots: ['<rootDir>/__tests__/guarantees'],
      globals: { EXPRESS_MAJOR: 5, STORE_LATENCY: true },
    },
    {
      // The guarantee suites again, on the Redis task store (a redis-server per file; skipped with a
      // warning where there is none, required under CI).
      ...base,
      displayName: 'redis',
      roots: ['<rootDir>/__tests__/guarantees'],
      globals: { EXPRESS_MAJOR: 5, REDIS_STORE: true },
    },
    {
      // The guarantee suites again, on the PostgreSQL task store (the run's throwaway cluster, a
      // schema per file; skipped with a warning where PostgreSQL is absent, required under CI).
      ...base,
      displayName: 'postgres',
      roots: ['<rootDir>/__tests__/guarantees'],
      globals: { EXPRESS_MAJOR: 5, PG_STORE: true },
    },
  ],
};
