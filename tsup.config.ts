import { defineConfig } from 'tsup';

// Dual build: dist/index.mjs + index.d.mts for import, dist/index.cjs + index.d.cts for require;
// the same for dist/testing.*, dist/sqlite.*, dist/redis.* and dist/postgres.* (a2a-express-kit/testing,
// /sqlite, /redis, /postgres: separate entries so that only users of those stores load better-sqlite3,
// redis or pg).
export default defineConfig({
  entry: { index: 'lib/index.ts', testing: 'lib/testing/index.ts', sqlite: 'lib/sqlite.ts', redis: 'lib/redis.ts', postgres: 'lib/postgres.ts' },
  format: ['esm', 'cjs'],
  // Shared chunks for CJS too: without them each CJS entry would carry its own copy of the store
  // error classes, and `instanceof` would fail across the two entry points.
  splitting: true,
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // __dirname in the ESM build too: the inspector finds its page bundle (dist/inspector) beside it.
  shims: true,
  outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
});
