import { defineConfig } from 'tsup';

// Dual build: dist/index.mjs + index.d.mts for import, dist/index.cjs + index.d.cts for require.
export default defineConfig({
  entry: { index: 'lib/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
});
