// ESLint (flat config): typescript-eslint's recommended rules on the library, its tests, examples,
// bench and scripts; no console in lib/ (a logger is injected).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'docs/api/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-console': 'error',
    },
  },
  // Tests read untyped JSON answers and load modules the jest way (jest.mock(require.resolve(...))).
  {
    files: ['__tests__/**', 'bench/**', 'scripts/**'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  { files: ['**/*.js', '**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  // The inspector's page runs in the browser.
  { files: ['lib/inspector/ui/**'], languageOptions: { globals: { ...globals.browser } } },
);
