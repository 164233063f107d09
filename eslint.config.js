import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**', 'playwright-report/**', 'bench-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-console': 'off',
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'warn' },
  },
  {
    // A job's retry notices travel by its AbortSignal (electron/core/remote/retry-notice.ts): a
    // signal made from another is made there, so a request given it still reaches its job; and
    // no async context store (its promise hooks cost every promise memory: docs/performance.md).
    files: ['electron/**/*.ts'],
    ignores: ['electron/core/remote/retry-notice.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='AbortSignal'][property.name='any']", message: 'Use derivedSignal (electron/core/remote/retry-notice.ts): a signal made with it still leads to its job, whose retry notices a request given it must reach.' },
      ],
      'no-restricted-imports': ['error', { paths: [{ name: 'node:async_hooks', message: 'Promise hooks cost every promise memory (issue #18); pass what a job needs along (retry-notice.ts).' }, { name: 'async_hooks', message: 'Promise hooks cost every promise memory (issue #18); pass what a job needs along (retry-notice.ts).' }] }],
    },
  },
  {
    // Playwright fixtures are declared with an empty destructuring pattern: `async ({}, testInfo)`.
    files: ['e2e/**/*.ts'],
    rules: { 'no-empty-pattern': 'off' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
