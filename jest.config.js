/** Jest runs the TypeScript sources through ts-jest (CommonJS); the built package is checked by the consumer tests. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  // Sources use NodeNext-style '.js' specifiers; map them back to the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', '^a2a-express-kit$': '<rootDir>/lib/index.ts' },
  testTimeout: 30000,
};
